import { otherMethods, withTenant } from "@/lib/web/http";
import { parseResumePoint } from "@/lib/web/sse";
import { parsePublicationId, publicationNotFound, readPublication } from "@/lib/reels/read-publication";
import { publicationEventFrame, replayPublicationEvents } from "@/lib/reels/replay-publication-events";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    const id = parsePublicationId((await params).id);
    const after = parseResumePoint(request);
    if (!(await readPublication(services.redis, tenantId, id))) throw publicationNotFound();
    const deps = { redis: services.redis, hub: services.hub() };
    return services.streams.respond(
      tenantId,
      (signal) => replayPublicationEvents(deps, id, after, signal),
      publicationEventFrame,
      request.signal,
    );
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
