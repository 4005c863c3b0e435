import { otherMethods, withTenant } from "@/lib/web/http";
import { jobNotFound, parseJobId } from "@/lib/jobs/job-id";
import { readJob } from "@/lib/jobs/read-job";
import { deltaFrame, replayDeltas } from "@/lib/jobs/replay-deltas";
import { parseResumePoint } from "@/lib/web/sse";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    const jobId = parseJobId((await params).id);
    const after = parseResumePoint(request);
    if (!(await readJob(services.redis, tenantId, jobId))) throw jobNotFound();
    const deps = { redis: services.redis, hub: services.hub() };
    return services.streams.respond(
      tenantId,
      (signal) => replayDeltas(deps, jobId, after, signal),
      deltaFrame,
      request.signal,
    );
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
