import { json, otherMethods, parseWith, readJsonBody, withTenant } from "@/lib/web/http";
import { commandInputSchema } from "@/lib/jobs/command";
import { listModels } from "@/lib/jobs/list-models";
import { jobListQuerySchema, listJobs } from "@/lib/jobs/read-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { recordJobSubmitted } from "@/lib/metrics";
import { readTenantLoad } from "@/lib/system/read-running";
import { traced } from "@/lib/tracing";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  traced("POST /v1/jobs", async (request: Request, { services, tenantId }) => {
    const input = await readJsonBody(request, commandInputSchema(services.config.MAX_PROMPT_CHARS));
    const result = await submitJob(
      {
        redis: services.redis,
        producer: services.producer,
        models: listModels(services.config),
        submitsPerMinute: services.config.RATE_LIMIT_PER_MINUTE,
      },
      tenantId,
      input,
    );
    const { job } = result;
    if (!result.created) return json(job, 200, { location: `/v1/jobs/${job.job_id}` });
    recordJobSubmitted({ model: job.model_name, tenantId });
    return json({ job_id: job.job_id, status: job.status, stream_url: job.stream_url }, 202, {
      location: `/v1/jobs/${job.job_id}`,
    });
  }),
);

export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const query = parseWith(jobListQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
  const [page, running] = await Promise.all([
    listJobs(services.redis, tenantId, query),
    readTenantLoad(services.redis, tenantId, services.config.TENANT_CONCURRENCY),
  ]);
  return json({ ...page, running });
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET, POST });
