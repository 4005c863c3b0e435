import { jobViewOfAuditEvent, type JobAuditEvent } from "../jobs/audit-event";
import type { FinalJobStatus } from "../jobs/status";
import type { Redis } from "../redis";
import { enqueueWebhookEvent } from "./enqueue-event";
import type { WebhookEventType } from "./events";
import type { TenantsWithWebhooks } from "./tenants-with-webhooks";

const EVENT_OF_STATUS: Record<FinalJobStatus, WebhookEventType> = {
  COMPLETED: "job.completed",
  FAILED: "job.failed",
  CANCELLED: "job.cancelled",
};

/**
 * Turns one audit event into deliveries, with the job as the event says it finished: a job deleted
 * or expired before this consumer reached its event (a client that deletes what it just got, a
 * backlog) is still announced. A tenant without webhooks costs only the cached answer that says so.
 */
export async function enqueueJobEvent(
  redis: Redis,
  tenants: TenantsWithWebhooks,
  event: JobAuditEvent,
): Promise<string[]> {
  if (!(await tenants.has(event.tenant_id))) return [];
  const at = new Date(Date.parse(event.completed_at ?? "") || Date.now());
  return enqueueWebhookEvent(redis, {
    tenantId: event.tenant_id,
    type: EVENT_OF_STATUS[event.status],
    occurrence: `job:${event.job_id}`,
    at,
    data: async () => jobViewOfAuditEvent(event),
  });
}
