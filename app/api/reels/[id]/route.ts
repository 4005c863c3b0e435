import { authenticate } from "@/lib/auth";
import { json, withProblems } from "@/lib/http";
import { parsePublicationId, publicationNotFound, readPublication } from "@/lib/reels/publication";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const GET = withProblems(async (request: Request, { params }: { params: Promise<{ id: string }> }) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const publication = await readPublication(services.redis, tenantId, parsePublicationId((await params).id));
  if (!publication) throw publicationNotFound();
  return json(publication);
});
