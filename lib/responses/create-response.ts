import { ApiError } from "../errors";
import { json } from "../http";
import { listModels } from "../jobs/models";
import { submitJob } from "../jobs/submit-job";
import { recordJobSubmitted } from "../metrics";
import { enforceRateLimit } from "../rate-limit";
import type { Services } from "../services";
import { readResponse, responseEventFrame, streamResponse, waitForEnd, type FoundResponse } from "./read-response";
import { responseFieldsOf, toCommandInput, type ResponseRequest } from "./request";
import { toResponseObject } from "./response-object";

type CreateServices = Pick<Services, "config" | "redis" | "producer" | "hub" | "streams">;

/**
 * Submits the request as an ordinary job (same command, topic, record and audit event as
 * POST /v1/jobs), with what the Response echoes kept on its record.
 */
export async function createResponse(services: Omit<CreateServices, "streams" | "hub">, tenantId: string, request: ResponseRequest): Promise<FoundResponse> {
  const models = listModels(services.config);
  if (!models.some((m) => m.id === request.model)) {
    throw new ApiError("bad-request", "Unknown model", [{ path: "model", message: `The requested model '${request.model}' does not exist; this deployment serves ${models.map((m) => m.id).join(", ")}` }]);
  }
  const input = toCommandInput(request, tenantId, services.config.MAX_PROMPT_CHARS);
  await enforceRateLimit(services.redis, tenantId, "submit", services.config.RATE_LIMIT_PER_MINUTE);
  const fields = responseFieldsOf(request);
  const { job } = await submitJob({ redis: services.redis, producer: services.producer, models }, tenantId, input, { response: JSON.stringify(fields) });
  recordJobSubmitted({ model: job.model_name, tenantId });
  return { job, fields, response: toResponseObject(job, fields) };
}

/**
 * POST /v1/responses answered as OpenAI does: background answers the queued response at once;
 * stream sends its events; otherwise the call waits for the job and answers the finished response.
 * The job is durable whichever it is: a client that goes away can retrieve it by id later.
 */
export async function respondToCreate(services: CreateServices, tenantId: string, request: ResponseRequest, signal: AbortSignal): Promise<Response> {
  const created = await createResponse(services, tenantId, request);
  if (request.stream) {
    const deps = { redis: services.redis, hub: services.hub() };
    return services.streams.respond(tenantId, (streamSignal) => streamResponse(deps, tenantId, created, -1, streamSignal), responseEventFrame, signal);
  }
  if (request.background) return json(created.response);
  await waitForEnd({ redis: services.redis, hub: services.hub() }, created.job.job_id, signal);
  return json((await readResponse(services.redis, tenantId, created.response.id)).response);
}
