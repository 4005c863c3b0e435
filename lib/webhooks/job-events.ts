import { consumeInParallel, workerLimits, type ParallelConsumer } from "../consume/parallel-consumer";
import type { JobAuditEvent } from "../jobs/audit-event";
import { readJob } from "../jobs/read-job";
import type { FinalJobStatus } from "../jobs/status";
import type { Redis } from "../redis";
import { SUBSCRIPTIONS } from "../topics";
import type { WorkerContext } from "../worker/worker-context";
import { enqueueWebhookEvent } from "./enqueue-event";
import type { WebhookEventType } from "./events";

const EVENT_OF_STATUS: Record<FinalJobStatus, WebhookEventType> = {
  COMPLETED: "job.completed",
  FAILED: "job.failed",
  CANCELLED: "job.cancelled",
};

/** Turns one audit event into deliveries; a job already expired (a long backlog) sends nothing. */
export async function enqueueJobEvent(redis: Redis, event: JobAuditEvent): Promise<string[]> {
  const at = new Date(Date.parse(event.completed_at ?? "") || Date.now());
  return enqueueWebhookEvent(redis, {
    tenantId: event.tenant_id,
    type: EVENT_OF_STATUS[event.status],
    occurrence: `job:${event.job_id}`,
    at,
    data: () => readJob(redis, event.tenant_id, event.job_id),
  });
}

/**
 * Reads the audit topic in its own consumer group, so job webhooks follow what was written to the
 * log without touching the generation path. It runs on the same consumer kit as jobs and reels
 * (joins again after a broker outage or a crash, commits only settled offsets): a message is
 * settled only once its deliveries are queued in Redis, a throw is tried again with backoff, so
 * none is lost; queuing it twice makes no second delivery. An event that does not parse is logged
 * and skipped: no webhook can be made of it.
 */
export function consumeJobEvents(ctx: WorkerContext): Promise<ParallelConsumer> {
  return consumeInParallel(ctx, {
    ...SUBSCRIPTIONS.webhooks,
    ...workerLimits(ctx.config),
    async onInvalid(message, reason, control) {
      ctx.log("warn", "skipping an audit event that does not parse", { partition: control.partition, offset: message.offset, reason });
    },
    async work(event) {
      await enqueueJobEvent(ctx.redis, event);
      return "settled";
    },
  });
}
