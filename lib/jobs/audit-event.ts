import { z } from "zod";
import { costSchema, usageSchema, type JobRecord } from "./job-record";
import { toJobView, type JobView } from "./read-job";
import { FINAL_JOB_STATUSES, FINISH_REASONS, type FinalJobStatus } from "./status";

/**
 * A finished job's event on ai.generation.completed, the audit log, declared once: the worker
 * builds it with `jobAuditEvent`, the webhook consumer gets it parsed with this schema (lib/topics.ts
 * names it as the topic's payload). Not strict: a consumer ignores fields it does not know.
 */
export const jobAuditEventSchema = z.object({
  job_id: z.string().min(1),
  tenant_id: z.string().min(1),
  model_name: z.string(),
  model_version: z.string(),
  prompt: z.string(),
  parameters: z.object({ temperature: z.number(), max_tokens: z.number() }),
  output: z.string(),
  status: z.enum(FINAL_JOB_STATUSES),
  finish_reason: z.enum(FINISH_REASONS).nullable(),
  error: z.string().nullable(),
  usage: usageSchema.nullable(),
  cost: costSchema.nullable(),
  cost_note: z.string().nullable(),
  timing: z.object({
    queued_ms: z.number(),
    ttft_ms: z.number().nullable(),
    generation_ms: z.number(),
    tokens_per_second: z.number().nullable(),
  }),
  worker_id: z.string(),
  attempt: z.number(),
  submitted_at: z.string(),
  /** When the job's first attempt started (absent from the events of older workers). */
  started_at: z.string().nullable().optional(),
  completed_at: z.string().optional(),
});

export type JobAuditEvent = z.infer<typeof jobAuditEventSchema>;

/** The event of a job whose record holds its final state; `workerId` names the worker that ran it. */
export function jobAuditEvent(record: JobRecord & { status: FinalJobStatus }, workerId: string): JobAuditEvent {
  return {
    job_id: record.job_id,
    tenant_id: record.tenant_id,
    model_name: record.model_name,
    model_version: record.model_version ?? record.model_name,
    prompt: record.prompt,
    parameters: { temperature: record.temperature, max_tokens: record.max_tokens },
    output: record.output ?? "",
    status: record.status,
    finish_reason: record.finish_reason ?? null,
    error: record.error || null,
    usage: record.usage ?? null,
    cost: record.cost ?? null,
    cost_note: record.cost_note || null,
    timing: {
      queued_ms: record.queued_ms ?? 0,
      ttft_ms: record.ttft_ms ?? null,
      generation_ms: record.generation_ms ?? 0,
      tokens_per_second: record.tokens_per_second ?? null,
    },
    worker_id: workerId,
    attempt: record.attempts,
    submitted_at: record.created_at,
    started_at: record.started_at || null,
    completed_at: record.completed_at,
  };
}

/**
 * The finished job as GET /v1/jobs/{id} showed it when the event was written, from the event
 * alone: what its webhooks deliver, whether or not the job is still in Redis (deleted, expired).
 */
export function jobViewOfAuditEvent(event: JobAuditEvent): JobView {
  return toJobView(
    {
      job_id: event.job_id,
      tenant_id: event.tenant_id,
      model_name: event.model_name,
      status: event.status,
      finish_reason: event.finish_reason ?? undefined,
      prompt: event.prompt,
      temperature: event.parameters.temperature,
      max_tokens: event.parameters.max_tokens,
      usage: event.usage ?? undefined,
      cost: event.cost ?? undefined,
      cost_note: event.cost_note ?? undefined,
      created_at: event.submitted_at,
      started_at: event.started_at ?? undefined,
      completed_at: event.completed_at,
      ttft_ms: event.timing.ttft_ms ?? undefined,
      tokens_per_second: event.timing.tokens_per_second ?? undefined,
      attempts: event.attempt,
      error: event.error ?? undefined,
    },
    event.output,
  );
}
