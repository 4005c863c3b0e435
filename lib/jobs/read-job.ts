import { readIndexPage, type IndexCursor } from "../paging";
import { execPipeline, type Redis } from "../redis";
import { jobKeys } from "./keys";
import { FINISH_REASONS, isFinalJob, type FinishReason, type JobStatus } from "./status";
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

const num = (v: string | undefined) => (v === undefined || v === "" ? null : Number(v));
const parsed = <T>(v: string | undefined): T | null => (v ? (JSON.parse(v) as T) : null);

export function toJobView(state: Record<string, string>, output: string): JobView {
  return {
    job_id: state.job_id,
    tenant_id: state.tenant_id,
    model_name: state.model_name,
    status: state.status as JobStatus,
    finish_reason: isFinalJob(state.status) && FINISH_REASONS.includes(state.finish_reason as FinishReason) ? (state.finish_reason as FinishReason) : null,
    prompt: state.prompt ?? "",
    temperature: Number(state.temperature),
    max_tokens: Number(state.max_tokens),
    output,
    usage: parsed(state.usage),
    cost: parsed(state.cost),
    cost_note: state.cost_note || null,
    created_at: state.created_at,
    started_at: state.started_at || null,
    completed_at: state.completed_at || null,
    ttft_ms: num(state.ttft_ms),
    tokens_per_second: num(state.tokens_per_second),
    attempts: Number(state.attempts ?? 0),
    error: state.error || null,
    stream_url: `/jobs/${state.job_id}/stream`,
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
  const state = await redis.hgetall(jobKeys.state(jobId));
  if (!state.job_id || state.tenant_id !== tenantId || state.submitting === "1") return undefined;
  const output = isFinalJob(state.status) ? (state.output ?? "") : outputFromEvents(await redis.lrange(jobKeys.events(jobId), 0, -1));
  return toJobView(state, output);
}

/** The tenant's jobs, newest first; `cursor` is where the previous page ended (see lib/paging.ts). */
export async function listJobs(redis: Redis, tenantId: string, opts: { limit: number; cursor?: IndexCursor }) {
  const { entries: page, next } = await readIndexPage(redis, jobKeys.tenantIndex(tenantId), opts.limit, opts.cursor);
  const pipeline = redis.pipeline();
  for (const { id } of page) pipeline.hgetall(jobKeys.state(id));
  const states = (await execPipeline(pipeline)) as Record<string, string>[];
  const expired = page.filter((_, i) => !states[i]?.job_id).map((e) => e.id);
  if (expired.length) await redis.zrem(jobKeys.tenantIndex(tenantId), ...expired);
  const data = states
    .filter((s) => s?.job_id && s.submitting !== "1")
    .map((s) => {
      const view = toJobView(s, s.output ?? "");
      return { ...view, output: view.output.slice(0, 280) };
    });
  return { data, next_cursor: next };
}
