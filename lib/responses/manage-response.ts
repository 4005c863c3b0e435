import { z } from "zod";
import { ApiError } from "../errors";
import { json, parseWith } from "../web/http";
import { cancelJob } from "../jobs/cancel-job";
import { deleteSettledJob } from "../jobs/delete-job";
import { isFinalJob } from "../jobs/status";
import type { Services } from "../web/services";
import { readResponse, responseEventFrame, streamResponse, waitForEnd, type FoundResponse } from "./read-response";

type ManageServices = Pick<Services, "redis" | "hub" | "streams">;

/** How long cancel and delete wait for a running job's worker to stop before they answer. */
export const CANCEL_WAIT_MS = 10_000;
const AUDIT_POLL_MS = 100;

export const retrieveQuerySchema = z.strictObject({
  stream: z.enum(["true", "false"]).optional(),
  starting_after: z.coerce.number().int().min(0).optional(),
  // Dispatch pads no events, so there is nothing to obfuscate: accepted either way.
  include_obfuscation: z.enum(["true", "false"]).optional(),
});

/** GET /v1/responses/{id}: the Response object, or with `?stream=true` its events after `starting_after` (background resume). */
export async function respondToRetrieve(
  services: ManageServices,
  tenantId: string,
  responseId: string,
  query: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  const { stream, starting_after } = parseWith(retrieveQuerySchema, query);
  const found = await readResponse(services.redis, tenantId, responseId);
  if (stream !== "true") return json(found.response);
  const deps = { redis: services.redis, hub: services.hub() };
  return services.streams.respond(
    tenantId,
    (streamSignal) => streamResponse(deps, tenantId, found, starting_after ?? -1, streamSignal),
    responseEventFrame,
    signal,
  );
}

/**
 * Cancels a background response (idempotent: a finished one answers as it is) and waits a little
 * for a running job's worker to stop, so the answer is usually `cancelled` already.
 */
export async function cancelResponse(
  services: ManageServices,
  tenantId: string,
  responseId: string,
  signal: AbortSignal,
): Promise<FoundResponse> {
  const found = await readResponse(services.redis, tenantId, responseId);
  if (!found.fields.background)
    throw new ApiError("bad-request", "Only responses created with background set to true can be cancelled.");
  if (isFinalJob(found.job.status)) return found;
  // The job's first final message is its final state: a worker that read it queued just before the
  // cancel finds it final when it starts, and ends nothing a second time (lib/jobs/start-attempt.ts).
  const within = AbortSignal.any([signal, AbortSignal.timeout(CANCEL_WAIT_MS)]);
  await cancelAndWait(services, tenantId, found.job.job_id, within);
  return readResponse(services.redis, tenantId, responseId);
}

/**
 * DELETE /v1/responses/{id}: stops the job if it runs, then removes it once its worker is done with
 * it (final, audit event written). 409 when that takes longer than CANCEL_WAIT_MS.
 */
export async function deleteResponse(
  services: ManageServices,
  tenantId: string,
  responseId: string,
  signal: AbortSignal,
): Promise<{ id: string; object: "response"; deleted: true }> {
  const { job, response } = await readResponse(services.redis, tenantId, responseId);
  const within = AbortSignal.any([signal, AbortSignal.timeout(CANCEL_WAIT_MS)]);
  if (!isFinalJob(job.status)) await cancelAndWait(services, tenantId, job.job_id, within);
  // The audit event follows the final state by a produce: a short wait, polled.
  while (!(await deleteSettledJob(services.redis, tenantId, job.job_id))) {
    if (within.aborted)
      throw new ApiError("conflict", "The response is still being cancelled; try the delete again shortly.");
    await new Promise((resolve) => setTimeout(resolve, AUDIT_POLL_MS));
  }
  return { id: response.id, object: "response", deleted: true };
}

/** Cancels the job (a queued one at once, a running one through its worker) and waits for its final message, until `signal` aborts. */
async function cancelAndWait(
  services: ManageServices,
  tenantId: string,
  jobId: string,
  signal: AbortSignal,
): Promise<void> {
  await cancelJob(services.redis, tenantId, jobId);
  await waitForEnd({ redis: services.redis, hub: services.hub() }, jobId, signal);
}
