import { z } from "zod";
import type { Redis } from "../redis";
import { jobKeys } from "./keys";
import { FINISH_REASONS, JOB_STATUSES } from "./status";
import { parseHashRecord } from "../hash-record";

/**
 * A job's record, the hash at job:state:{id}, declared once: writers spell its fields through
 * `JobHash` (a misspelt field does not compile), readers parse it with `jobRecordSchema`. The Lua
 * scripts of lib/accept (`tenant_id`, `fingerprint`, `submitting`) and cancel-job name a few fields
 * too; tests/unit/job-record.test.ts parses what they write.
 */

/** An empty string is how the hash says "not known" (the time to first token of a job that produced nothing). */
const optionalNumber = z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().optional());
/** Set to "1" once, never to anything else. */
const flag = z.preprocess((v) => v === "1", z.boolean());
const json = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    if (typeof v !== "string" || v === "") return undefined;
    try {
      return JSON.parse(v);
    } catch {
      return undefined;
    }
  }, schema.optional());

export const usageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});
export const costSchema = z.object({ currency: z.literal("USD"), amount: z.number() });

export const jobRecordSchema = z.object({
  job_id: z.string().min(1),
  tenant_id: z.string(),
  model_name: z.string(),
  prompt: z.string().default(""),
  temperature: z.coerce.number(),
  max_tokens: z.coerce.number(),
  /** The command's own time (the client's, or the submitter's clock). */
  timestamp: z.string().optional(),
  status: z.enum(JOB_STATUSES),
  created_at: z.string(),
  /** What makes two submissions with the same job_id the same (see submit-job). */
  fingerprint: z.string().default(""),
  /** Claimed, but the broker has not acknowledged it yet: invisible to reads and lists. */
  submitting: flag,
  attempts: z.coerce.number().default(0),
  worker_id: z.string().optional(),
  /** The run holding the job's lease (see runUnderLease). */
  run_id: z.string().optional(),
  started_at: z.string().optional(),
  attempt_started_at: z.string().optional(),
  cancel_requested: flag,
  /** The whole text, written with the final state; until then the event list holds it. */
  output: z.string().optional(),
  usage: json(usageSchema),
  /** Empty when the model has no price; `cost_note` then says why. */
  cost: json(costSchema.nullable()),
  cost_note: z.string().optional(),
  finish_reason: z.enum(FINISH_REASONS).optional(),
  error: z.string().optional(),
  completed_at: z.string().optional(),
  generation_ms: optionalNumber,
  queued_ms: optionalNumber,
  ttft_ms: optionalNumber,
  tokens_per_second: optionalNumber,
  model_version: z.string().optional(),
  /** A FAILED job's command is on the DLQ. */
  dead_lettered: flag,
  /** Its event is on ai.generation.completed. */
  audited: flag,
  /** It is added to its tenant's usage aggregates (lib/usage/record-usage.ts). */
  usage_counted: flag,
  /** Set for a job submitted as an OpenAI Response: what that object echoes beyond the command, JSON that lib/responses reads. */
  response: z.string().optional(),
});

export type JobRecord = z.infer<typeof jobRecordSchema>;
export type JobField = keyof JobRecord;
/** Fields as the hash holds them: strings, written only under their declared names. */
export type JobHash = Partial<Record<JobField, string>>;

/** Parses a hash (HGETALL's answer); undefined when there is no job there, or not a whole one. */
export function parseJobRecord(hash: Record<string, string> | null | undefined): JobRecord | undefined {
  return parseHashRecord(jobRecordSchema, "job_id", hash);
}

export async function readJobRecord(redis: Redis, jobId: string): Promise<JobRecord | undefined> {
  return parseJobRecord(await redis.hgetall(jobKeys.state(jobId)));
}

/** HSET's field/value arguments. */
export function jobHashArgs(fields: JobHash): string[] {
  return Object.entries(fields).flatMap(([field, value]) => (value === undefined ? [] : [field, value]));
}
