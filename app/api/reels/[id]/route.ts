import { json, withTenant } from "@/lib/http";
import { parsePublicationId, publicationNotFound, readPublication } from "@/lib/reels/publication";

export const dynamic = "force-dynamic";

export const GET = withTenant(async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
  const publication = await readPublication(services.redis, tenantId, parsePublicationId((await params).id));
  if (!publication) throw publicationNotFound();
  return json(publication);
});
