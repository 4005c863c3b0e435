import { json, otherMethods, withTenant } from "@/lib/web/http";
import { traced } from "@/lib/tracing";
import { parsePublicationId, publicationNotFound } from "@/lib/reels/read-publication";
import { resumePublication } from "@/lib/reels/resume-publication";
import { namespaceOf } from "@/lib/web/namespace";

export const dynamic = "force-dynamic";

// Traced as the submit is: the run this sends continues the client's trace.
export const POST = withTenant(
  traced(
    (request) => `POST ${namespaceOf(request)}/reels/{id}/resume`,
    async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
      const publication = await resumePublication(
        { redis: services.redis, producer: services.producer },
        tenantId,
        parsePublicationId((await params).id),
      );
      if (!publication) throw publicationNotFound();
      return json({ publication_id: publication.publication_id, status: publication.status }, 202, {
        location: `${namespaceOf(request)}/reels/${publication.publication_id}`,
      });
    },
  ),
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
