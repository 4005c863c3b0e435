import type { Admin } from "kafkajs";
import { readConsumerLag, type GroupLag } from "../consumer-lag";
import { jobRecordSchema, type JobField } from "../jobs/job-record";
import { jobKeys } from "../jobs/keys";
import { JOB_STATUSES, isFinalJob, type JobStatus } from "../jobs/status";
import type { Redis } from "../redis";
import { withTimeout } from "../with-timeout";

/** A part of the status that could not be read says why, instead of failing the whole answer. */
export type Part<T> = ({ ok: true } & T) | { ok: false; error: string };

export interface CompletedJob {
  job_id: string;
  status: JobStatus;
  model_name: string;
  completed_at: string;
  ttft_ms: number | null;
  tokens_per_second: number | null;
  completion_tokens: number | null;
  worker_id: string | null;
}

export interface SystemStatus {
  generated_at: string;
  kafka: Part<{ groups: GroupLag[]; audit_log: { topic: string; events: number } }>;
  jobs: Part<{ by_status: Record<JobStatus, number>; counted: number; recent_completed: CompletedJob[] }>;
}

const TIMEOUT_MS = 3000;
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

const FIELDS = [
  "job_id",
  "status",
  "model_name",
  "completed_at",
  "ttft_ms",
  "tokens_per_second",
  "usage",
  "worker_id",
  "submitting",
] as const satisfies readonly JobField[];
/** The part of the job record the status page reads (HMGET, not the whole hash with its prompt and output). */
const statusRowSchema = jobRecordSchema.pick(
  Object.fromEntries(FIELDS.map((f) => [f, true])) as { [F in (typeof FIELDS)[number]]: true },
);

/**
 * The tenant's jobs counted by status, and its latest finished ones, from the read model in Redis
 * (the tenant's job index, newest first, up to `limit` jobs; finished jobs expire after a day).
 */
export async function readJobsByStatus(redis: Redis, tenantId: string, { limit = 2000, recent = 8 } = {}) {
  const ids = await redis.zrevrange(jobKeys.tenantIndex(tenantId), 0, limit - 1);
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(jobKeys.state(id), ...FIELDS);
  const rows = ((await pipeline.exec()) ?? []).map(([, values]) => {
    const present = FIELDS.flatMap((f, i) =>
      (values as (string | null)[])[i] === null ? [] : [[f, (values as string[])[i]]],
    );
    return statusRowSchema.safeParse(Object.fromEntries(present)).data;
  });
  const byStatus = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  const finished: CompletedJob[] = [];
  let counted = 0;
  for (const row of rows) {
    if (!row || row.submitting) continue;
    byStatus[row.status] += 1;
    counted += 1;
    if (isFinalJob(row.status) && row.completed_at) {
      finished.push({
        job_id: row.job_id,
        status: row.status,
        model_name: row.model_name,
        completed_at: row.completed_at,
        ttft_ms: row.ttft_ms ?? null,
        tokens_per_second: row.tokens_per_second ?? null,
        completion_tokens: row.usage?.completion_tokens ?? null,
        worker_id: row.worker_id || null,
      });
    }
  }
  finished.sort((a, b) => b.completed_at.localeCompare(a.completed_at));
  return { by_status: byStatus, counted, recent_completed: finished.slice(0, recent) };
}

/** Everything the system page shows besides health; each part fails on its own. */
export async function readSystemStatus(
  deps: { redis: Redis; admin: () => Promise<Admin>; now?: () => Date },
  tenantId: string,
): Promise<SystemStatus> {
  const settle = async <T>(what: string, read: () => Promise<T>): Promise<Part<T>> => {
    try {
      return { ok: true, ...(await withTimeout(read(), TIMEOUT_MS, what)) };
    } catch (error) {
      return { ok: false, error: message(error) };
    }
  };
  const [kafka, jobs] = await Promise.all([
    settle("kafka", async () => readConsumerLag(await deps.admin())),
    settle("redis", () => readJobsByStatus(deps.redis, tenantId)),
  ]);
  return { generated_at: (deps.now?.() ?? new Date()).toISOString(), kafka, jobs };
}
