import { json, otherMethods, parseWith, readJsonBody, withTenant } from "@/lib/web/http";
import { listPublications, publicationListQuerySchema } from "@/lib/reels/read-publication";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { submitPublication } from "@/lib/reels/submit-publication";
import { traced } from "@/lib/tracing";
import { namespaceOf } from "@/lib/web/namespace";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  traced(
    (request) => `POST ${namespaceOf(request)}/reels`,
    async (request: Request, { services, tenantId }) => {
      const input = await readJsonBody(request, publicationInputSchema);
      const { created, publication } = await submitPublication(
        {
          redis: services.redis,
          producer: services.producer,
          connected: services.accounts,
          uploadUrls: services.uploadUrls,
          submitsPerMinute: services.config.RATE_LIMIT_PER_MINUTE,
        },
        tenantId,
        input,
        { idempotencyKey: request.headers.get("idempotency-key") },
      );
      const location = `${namespaceOf(request)}/reels/${publication.publication_id}`;
      if (!created) return json(publication, 200, { location });
      return json({ publication_id: publication.publication_id, status: publication.status }, 202, { location });
    },
  ),
);

export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const query = parseWith(publicationListQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
  return json(await listPublications(services.redis, tenantId, query));
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET, POST });
