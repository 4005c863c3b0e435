import { json, otherMethods, withTenant } from "@/lib/web/http";
import { jobNotFound, parseJobId } from "@/lib/jobs/job-id";
import { readJob } from "@/lib/jobs/read-job";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    const job = await readJob(services.redis, tenantId, parseJobId((await params).id));
    if (!job) throw jobNotFound();
    return json(job);
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
