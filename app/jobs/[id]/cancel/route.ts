import { authenticate } from "@/lib/auth";
import { json, withProblems } from "@/lib/http";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { jobNotFound, parseJobId } from "@/lib/jobs/job-id";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const POST = withProblems(async (request: Request, { params }: { params: Promise<{ id: string }> }) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const job = await cancelJob(services.redis, tenantId, parseJobId((await params).id));
  if (!job) throw jobNotFound();
  return json(job);
});
