import type { JobField } from "../jobs/job-record";
import { jobKeys } from "../jobs/keys";
import { readJob, type JobView } from "../jobs/read-job";
import { jobStreamSource } from "../jobs/replay-deltas";
import type { StreamMessage } from "../jobs/stream-message";
import type { Redis } from "../redis";
import { replay } from "../stream/replay";
import type { StreamHub } from "../stream/stream-hub";
import { ResponseEventSequence, type ResponseStreamEvent } from "./event-sequence";
import { jobIdOf, messageIdOf, responseNotFound } from "./ids";
import { parseResponseFields, type ResponseFields } from "./request";
import { responseStatusOf, toResponseObject, type ResponseObject } from "./response-object";

export interface StreamDeps {
  redis: Redis;
  hub: StreamHub;
}

export interface FoundResponse {
  job: JobView;
  fields: ResponseFields;
  response: ResponseObject;
}

/** The tenant's response by its id, with the job behind it; 404 when unknown, expired or another tenant's. */
export async function readResponse(redis: Redis, tenantId: string, responseId: string): Promise<FoundResponse> {
  const jobId = jobIdOf(responseId);
  const [job, raw] = await Promise.all([
    readJob(redis, tenantId, jobId),
    redis.hget(jobKeys.state(jobId), "response" satisfies JobField),
  ]);
  if (!job) throw responseNotFound(responseId);
  const fields = parseResponseFields(raw);
  return { job, fields, response: toResponseObject(job, fields) };
}

/**
 * A response's events after `startingAfter`, then live ones to the end. The whole sequence is
 * derived again from the job's first stream message each time (see ResponseEventSequence), and
 * only the numbers past `startingAfter` are sent.
 */
export async function* streamResponse(
  deps: StreamDeps,
  tenantId: string,
  found: Pick<FoundResponse, "job" | "fields">,
  startingAfter: number,
  signal: AbortSignal,
): AsyncGenerator<ResponseStreamEvent[]> {
  const { job, fields } = found;
  const accepted = toResponseObject({ ...job, status: "QUEUED", finish_reason: null, output: "", usage: null }, fields);
  const sequence = new ResponseEventSequence(messageIdOf(job.job_id), accepted);
  const unseen = (events: ResponseStreamEvent[]) => events.filter((e) => e.sequence_number > startingAfter);
  const first = unseen(sequence.start());
  if (first.length > 0) yield first;
  for await (const batch of replay(deps.hub, jobStreamSource(deps.redis, job.job_id), 0, signal)) {
    const events: ResponseStreamEvent[] = [];
    for (const message of batch) {
      if (message.is_final)
        events.push(...sequence.finish(await finalResponse(deps.redis, tenantId, found, accepted, message)));
      else if (message.reset) events.push(...sequence.reset());
      else events.push(...sequence.delta(message.delta));
    }
    const fresh = unseen(events);
    if (fresh.length > 0) yield fresh;
  }
}

/** The response as its job ended (the final message and the final record are written together); the message's status if the job is gone. */
async function finalResponse(
  redis: Redis,
  tenantId: string,
  found: Pick<FoundResponse, "job" | "fields">,
  accepted: ResponseObject,
  message: StreamMessage,
): Promise<ResponseObject> {
  const job = await readJob(redis, tenantId, found.job.job_id);
  if (job) return toResponseObject(job, found.fields);
  return {
    ...accepted,
    status: responseStatusOf({ status: message.status ?? "FAILED", finish_reason: message.finish_reason ?? null }),
  };
}

/** Resolves when the job's stream has its final message, or `signal` aborts. */
export async function waitForEnd(deps: StreamDeps, jobId: string, signal: AbortSignal): Promise<void> {
  for await (const batch of replay(deps.hub, jobStreamSource(deps.redis, jobId), 0, signal)) void batch;
}

/** One event as OpenAI frames it: its type as the SSE event name, the whole event as data. */
export const responseEventFrame = (event: ResponseStreamEvent) =>
  `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
