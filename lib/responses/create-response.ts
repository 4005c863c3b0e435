import { ApiError } from "../errors";
import { json } from "../web/http";
import { listModels } from "../jobs/list-models";
import { submitJob } from "../jobs/submit-job";
import { recordJobSubmitted } from "../metrics";
import type { Services } from "../web/services";
import { readResponse, responseEventFrame, streamResponse, waitForEnd, type FoundResponse } from "./read-response";
import { responseFieldsOf, toCommandInput, type ResponseRequest } from "./request";
import { toResponseObject } from "./response-object";

type CreateServices = Pick<Services, "config" | "redis" | "producer" | "hub" | "streams">;

/**
 * Submits the request as an ordinary job (same command, topic, record and audit event as
 * POST /v1/jobs), with what the Response echoes kept on its record.
 */
export async function createResponse(
  services: Omit<CreateServices, "streams" | "hub">,
  tenantId: string,
  request: ResponseRequest,
): Promise<FoundResponse> {
  const models = listModels(services.config);
  if (!models.some((m) => m.id === request.model)) {
    throw new ApiError("bad-request", "Unknown model", [
      {
        path: "model",
        message: `The requested model '${request.model}' does not exist; this deployment serves ${models.map((m) => m.id).join(", ")}`,
      },
    ]);
  }
  const input = toCommandInput(request, tenantId, services.config.MAX_PROMPT_CHARS);
  const fields = responseFieldsOf(request);
  const { redis, producer, config } = services;
  const deps = { redis, producer, models, submitsPerMinute: config.RATE_LIMIT_PER_MINUTE };
  const { job } = await submitJob(deps, tenantId, input, { response: JSON.stringify(fields) });
  recordJobSubmitted({ model: job.model_name, tenantId });
  return { job, fields, response: toResponseObject(job, fields) };
}

/**
 * POST /v1/responses answered as OpenAI does: background answers the queued response at once;
 * stream sends its events; otherwise the call waits for the job and answers the finished response.
 * The job is durable whichever it is: a client that goes away can retrieve it by id later. A stream
 * or a wait holds one of the tenant's stream slots, taken before the job is submitted, so a 429
 * (which the SDKs retry) never leaves a job behind.
 */
export async function respondToCreate(
  services: CreateServices,
  tenantId: string,
  request: ResponseRequest,
  signal: AbortSignal,
): Promise<Response> {
  if (request.background && !request.stream) return json((await createResponse(services, tenantId, request)).response);
  const slot = services.streams.reserve(tenantId);
  const deps = { redis: services.redis, hub: services.hub() };
  let created: FoundResponse;
  try {
    created = await createResponse(services, tenantId, request);
  } catch (error) {
    slot.release();
    throw error;
  }
  if (request.stream)
    return slot.respond(
      (streamSignal) => streamResponse(deps, tenantId, created, -1, streamSignal),
      responseEventFrame,
      signal,
    );
  try {
    await waitForEnd(deps, created.job.job_id, signal);
  } finally {
    slot.release();
  }
  return json((await readResponse(services.redis, tenantId, created.response.id)).response);
}
