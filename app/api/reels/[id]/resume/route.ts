import { json, otherMethods, withTenant } from "@/lib/web/http";
import { parsePublicationId, publicationNotFound } from "@/lib/reels/read-publication";
import { resumePublication } from "@/lib/reels/resume-publication";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    const publication = await resumePublication(
      { redis: services.redis, producer: services.producer },
      tenantId,
      parsePublicationId((await params).id),
    );
    if (!publication) throw publicationNotFound();
    return json({ publication_id: publication.publication_id, status: publication.status }, 202, {
      location: `/api/reels/${publication.publication_id}`,
    });
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
