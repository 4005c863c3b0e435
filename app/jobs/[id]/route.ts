import { authenticate } from "@/lib/auth";
import { json, withProblems } from "@/lib/http";
import { jobNotFound, parseJobId } from "@/lib/jobs/job-id";
import { readJob } from "@/lib/jobs/read-job";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const GET = withProblems(async (request: Request, { params }: { params: Promise<{ id: string }> }) => {
  const services = getServices();
  const { tenantId } = await authenticate(request, services);
  const job = await readJob(services.redis, tenantId, parseJobId((await params).id));
  if (!job) throw jobNotFound();
  return json(job);
});
