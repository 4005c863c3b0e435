import { json, otherMethods, withTenant } from "@/lib/web/http";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { jobNotFound, parseJobId } from "@/lib/jobs/job-id";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    const job = await cancelJob(services.redis, tenantId, parseJobId((await params).id));
    if (!job) throw jobNotFound();
    return json(job);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
