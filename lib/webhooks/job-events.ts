import { z } from "zod";
import { consumeInParallel, workerLimits, type ParallelConsumer } from "../consume/parallel-consumer";
import { readJob } from "../jobs/read-job";
import type { Redis } from "../redis";
import { SUBSCRIPTIONS } from "../topics";
import type { WorkerContext } from "../worker-context";
import { enqueueWebhookEvent } from "./enqueue-event";
import type { WebhookEventType } from "./events";

/** The fields of an audit event (ai.generation.completed) a webhook needs; the rest is the audit log's. */
const auditEventSchema = z.object({
  job_id: z.string().min(1),
  tenant_id: z.string().min(1),
  status: z.string(),
  completed_at: z.string().optional(),
});

const EVENT_OF_STATUS: Record<string, WebhookEventType> = {
  COMPLETED: "job.completed",
  FAILED: "job.failed",
  CANCELLED: "job.cancelled",
};

/** Turns one audit event into deliveries; a job already expired (a long backlog) sends nothing. */
export async function enqueueJobEvent(redis: Redis, raw: string): Promise<string[]> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return [];
  }
  const parsed = auditEventSchema.safeParse(value);
  const type = parsed.success ? EVENT_OF_STATUS[parsed.data.status] : undefined;
  if (!parsed.success || !type) return [];
  const event = parsed.data;
  const at = new Date(Date.parse(event.completed_at ?? "") || Date.now());
  return enqueueWebhookEvent(redis, { tenantId: event.tenant_id, type, occurrence: `job:${event.job_id}`, at, data: () => readJob(redis, event.tenant_id, event.job_id) });
}

/**
 * Reads the audit topic in its own consumer group, so job webhooks follow what was written to the
 * log without touching the generation path. It runs on the same consumer kit as jobs and reels
 * (joins again after a broker outage or a crash, commits only settled offsets): a message is
 * settled only once its deliveries are queued in Redis, a throw is tried again with backoff, so
 * none is lost; queuing it twice makes no second delivery.
 */
export function consumeJobEvents(ctx: WorkerContext): Promise<ParallelConsumer> {
  return consumeInParallel(ctx, {
    ...SUBSCRIPTIONS.webhooks,
    ...workerLimits(ctx.config),
    async work(message) {
      if (message.value) await enqueueJobEvent(ctx.redis, message.value.toString());
      return "settled";
    },
  });
}
