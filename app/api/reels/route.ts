import { authenticate } from "@/lib/auth";
import { json, pageQuerySchema, parseWith, readJsonBody, withProblems } from "@/lib/http";
import { listPublications, publicationInputSchema } from "@/lib/reels/publication";
import { submitPublication } from "@/lib/reels/submit-publication";
import { enforceRateLimit } from "@/lib/rate-limit";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const POST = withProblems(async (request: Request) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const input = await readJsonBody(request, publicationInputSchema);
  await enforceRateLimit(services.redis, tenantId, "submit", services.config.RATE_LIMIT_PER_MINUTE);
  const { created, publication } = await submitPublication(
    { redis: services.redis, producer: services.producer, accounts: services.config.REEL_ACCOUNTS },
    tenantId,
    input,
    { idempotencyKey: request.headers.get("idempotency-key") },
  );
  const location = `/api/reels/${publication.publication_id}`;
  if (!created) return json(publication, 200, { location });
  return json({ publication_id: publication.publication_id, status: publication.status }, 202, { location });
});


export const GET = withProblems(async (request: Request) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const query = parseWith(pageQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
  return json(await listPublications(services.redis, tenantId, query));
});
