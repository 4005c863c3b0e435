import { json, otherMethods, withTenant } from "@/lib/web/http";
import { traced } from "@/lib/tracing";
import { parsePublicationId, publicationNotFound } from "@/lib/reels/read-publication";
import { retryPublication } from "@/lib/reels/retry-publication";
import { namespaceOf } from "@/lib/web/namespace";

export const dynamic = "force-dynamic";

/**
 * Tries a FAILED or TIMED_OUT publication again with a new container: 202 with the publication.
 * Traced as the submit is: the run it sends continues the client's trace.
 */
export const POST = withTenant(
  traced(
    (request) => `POST ${namespaceOf(request)}/reels/{id}/retry`,
    async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
      const publication = await retryPublication(
        { redis: services.redis, producer: services.producer },
        tenantId,
        parsePublicationId((await params).id),
      );
      if (!publication) throw publicationNotFound();
      return json(publication, 202, { location: `${namespaceOf(request)}/reels/${publication.publication_id}` });
    },
  ),
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
