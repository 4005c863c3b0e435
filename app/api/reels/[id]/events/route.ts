import { authenticate } from "@/lib/auth";
import { withProblems } from "@/lib/http";
import { parseResumePoint } from "@/lib/jobs/job-id";
import { parsePublicationId, publicationNotFound, readPublication } from "@/lib/reels/publication";
import { publicationEventFrame, replayPublicationEvents } from "@/lib/reels/replay-publication-events";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const GET = withProblems(async (request: Request, { params }: { params: Promise<{ id: string }> }) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const id = parsePublicationId((await params).id);
  const after = parseResumePoint(request);
  if (!(await readPublication(services.redis, tenantId, id))) throw publicationNotFound();
  const deps = { redis: services.redis, hub: services.hub() };
  return services.streams.respond(tenantId, (signal) => replayPublicationEvents(deps, id, after, signal), publicationEventFrame, request.signal);
});
