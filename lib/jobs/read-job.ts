import { z } from "zod";
import { pageQuerySchema, readIndexPage, type IndexCursor } from "../paging";
import { forgetIndexed, listedIndex } from "../status-index";
import { execPipeline, type Redis } from "../redis";
import { parseJobRecord, readJobRecord, type JobRecord } from "./job-record";
import { JOB_STATUS_INDEXING, jobKeys } from "./keys";
import { isFinalJob, JOB_STATUSES, type FinishReason, type JobStatus } from "./status";
import { parseStreamMessage } from "./stream-message";

export interface JobView {
  job_id: string;
  tenant_id: string;
  model_name: string;
  status: JobStatus;
  /** Why generation stopped; null until the job is final. */
  finish_reason: FinishReason | null;
  prompt: string;
  temperature: number;
  max_tokens: number;
  output: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  cost: { currency: string; amount: number } | null;
  /** Why `cost` is null once the job is final (e.g. "No price is configured for model x"). */
  cost_note: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  ttft_ms: number | null;
  tokens_per_second: number | null;
  attempts: number;
  error: string | null;
  stream_url: string;
}

/** What a job's view is made of: its record's fields (a stored record, or one read back from its audit event). */
export type JobViewSource = Pick<
  JobRecord,
  | "job_id"
  | "tenant_id"
  | "model_name"
  | "status"
  | "finish_reason"
  | "prompt"
  | "temperature"
  | "max_tokens"
  | "usage"
  | "cost"
  | "cost_note"
  | "created_at"
  | "started_at"
  | "completed_at"
  | "ttft_ms"
  | "tokens_per_second"
  | "attempts"
  | "error"
>;

export function toJobView(record: JobViewSource, output: string): JobView {
  return {
    job_id: record.job_id,
    tenant_id: record.tenant_id,
    model_name: record.model_name,
    status: record.status,
    finish_reason: isFinalJob(record.status) ? (record.finish_reason ?? null) : null,
    prompt: record.prompt,
    temperature: record.temperature,
    max_tokens: record.max_tokens,
    output,
    usage: record.usage ?? null,
    cost: record.cost ?? null,
    cost_note: record.cost_note || null,
    created_at: record.created_at,
    started_at: record.started_at || null,
    completed_at: record.completed_at || null,
    ttft_ms: record.ttft_ms ?? null,
    tokens_per_second: record.tokens_per_second ?? null,
    attempts: record.attempts,
    error: record.error || null,
    stream_url: `/jobs/${record.job_id}/stream`,
  };
}

/** The text the current attempt has produced so far: deltas after the last restart. */
export function outputFromEvents(raw: string[]): string {
  let text = "";
  for (const line of raw) {
    const message = parseStreamMessage(line);
    if (!message) continue;
    if (message.reset) text = "";
    else text += message.delta;
  }
  return text;
}

/** A tenant's job, or undefined when it does not exist, has expired or is another tenant's. */
export async function readJob(redis: Redis, tenantId: string, jobId: string): Promise<JobView | undefined> {
  const record = await readJobRecord(redis, jobId);
  if (!record || record.tenant_id !== tenantId || record.submitting) return undefined;
  const output = isFinalJob(record.status)
    ? (record.output ?? "")
    : outputFromEvents(await redis.lrange(jobKeys.events(jobId), 0, -1));
  return toJobView(record, output);
}

/** `?limit=&cursor=&status=` of GET /v1/jobs. */
export const jobListQuerySchema = pageQuerySchema.extend({ status: z.enum(JOB_STATUSES).optional() });

/**
 * The tenant's jobs, newest first, or only those in `status` (its index, lib/status-index.ts);
 * `cursor` is where the previous page ended (see lib/paging.ts). A job that left the status
 * between the index read and its record's is left out of the page.
 */
export async function listJobs(
  redis: Redis,
  tenantId: string,
  opts: { limit: number; cursor?: IndexCursor; status?: JobStatus },
) {
  const index = listedIndex(JOB_STATUS_INDEXING, tenantId, opts.status);
  const { entries: page, next } = await readIndexPage(redis, index, opts.limit, opts.cursor);
  const pipeline = redis.pipeline();
  for (const { id } of page) pipeline.hgetall(jobKeys.state(id));
  const states = (await execPipeline(pipeline)) as Record<string, string>[];
  await forgetIndexed(
    redis,
    JOB_STATUS_INDEXING,
    tenantId,
    page.filter((_, i) => !states[i]?.job_id).map((e) => e.id),
  );
  const data = states
    .map(parseJobRecord)
    .filter((record): record is JobRecord => record !== undefined && !record.submitting)
    .filter((record) => !opts.status || record.status === opts.status)
    .map((record) => toJobView(record, (record.output ?? "").slice(0, 280)));
  return { data, next_cursor: next };
}
