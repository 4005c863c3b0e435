/**
 * A job's statuses and limits, dependency-free so the dashboard imports them as values and never
 * keeps a copy.
 */

export const JOB_STATUSES = ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Nothing more will happen to the job. */
export const FINAL_JOB_STATUSES = ["COMPLETED", "FAILED", "CANCELLED"] as const satisfies readonly JobStatus[];
export type FinalJobStatus = (typeof FINAL_JOB_STATUSES)[number];
export const isFinalJob = (status: string | null | undefined): status is FinalJobStatus =>
  status === "COMPLETED" || status === "FAILED" || status === "CANCELLED";

/** Why generation stopped, as OpenAI names it. */
export const FINISH_REASONS = ["stop", "length", "cancelled", "error"] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

/** The generation command's ranges and defaults (SPEC, POST /v1/jobs); the prompt's limit is MAX_PROMPT_CHARS (lib/config.ts). */
export const TEMPERATURE = { min: 0, max: 2, default: 0.2 } as const;
export const MAX_TOKENS = { min: 1, max: 32768, default: 2048 } as const;
