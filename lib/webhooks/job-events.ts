import type { JobAuditEvent } from "../jobs/audit-event";
import { readJob } from "../jobs/read-job";
import type { FinalJobStatus } from "../jobs/status";
import type { Redis } from "../redis";
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
