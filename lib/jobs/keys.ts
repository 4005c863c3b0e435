import type { StatusIndexing } from "../status-index";
import { JOB_STATUSES } from "./status";

/** Redis key names of a job, in one place. Every key of a job gets the same expiry. */
export const jobKeys = {
  state: (jobId: string) => `job:state:${jobId}`,
  /** Pub/sub channel of live deltas. */
  stream: (jobId: string) => `job:stream:${jobId}`,
  /** Every stream message of the job, in seq order, for replay to late or returning clients. */
  events: (jobId: string) => `job:events:${jobId}`,
  /** The worker holding the job, renewed while it generates. */
  lease: (jobId: string) => `job:lease:${jobId}`,
  /** The tenant's jobs by creation time, for GET /v1/jobs. */
  tenantIndex: (tenantId: string) => `tenant:jobs:${tenantId}`,
};

/** One channel tells every worker which job to stop. */
export const CANCEL_CHANNEL = "jobs:cancel";

/** Expiry of every key of a finished job (spec: 86400 s after the final delta). */
export const FINISHED_JOB_TTL_S = 86400;
/** A safety expiry for jobs not yet finished (their state and their event list), so nothing is kept for ever. */
export const OPEN_JOB_TTL_S = 7 * 86400;

/**
 * tenant:jobs:{tenant}: a job's keys live at most OPEN_JOB_TTL_S, or FINISHED_JOB_TTL_S after a
 * finish that came before it, so older entries are dead; and a tenant lists at most this many.
 */
export const JOB_INDEX_BOUND = { maxAgeMs: (OPEN_JOB_TTL_S + FINISHED_JOB_TTL_S) * 1000, maxEntries: 100_000 };

/** A tenant's jobs per status, beside tenant:jobs:{tenant} (lib/status-index.ts); every status write moves them. */
export const JOB_STATUS_INDEXING: StatusIndexing = {
  tenantIndex: (tenantId: string) => jobKeys.tenantIndex(tenantId),
  statuses: JOB_STATUSES,
  indexBound: JOB_INDEX_BOUND,
};
