import { authenticate } from "@/lib/auth";
import { json, withProblems } from "@/lib/http";
import { parsePublicationId, publicationNotFound } from "@/lib/reels/publication";
import { resumePublication } from "@/lib/reels/resume-publication";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const POST = withProblems(async (request: Request, { params }: { params: Promise<{ id: string }> }) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const publication = await resumePublication({ redis: services.redis, producer: services.producer }, tenantId, parsePublicationId((await params).id));
  if (!publication) throw publicationNotFound();
  return json({ publication_id: publication.publication_id, status: publication.status }, 202, { location: `/api/reels/${publication.publication_id}` });
});
