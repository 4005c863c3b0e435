import type { Consumer, Kafka } from "kafkajs";
import { z } from "zod";
import { createWorkerConsumer } from "../kafka";
import { readJob } from "../jobs/read-job";
import type { Log } from "../log";
import type { Redis } from "../redis";
import { CONSUMER_GROUPS, TOPICS } from "../topics";
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
 * log without touching the generation path. A message is committed only after its deliveries
 * are queued in Redis (kafkajs commits what eachMessage returned from), so none is lost; queuing
 * it twice makes no second delivery.
 */
export async function startJobEventConsumer({ kafka, redis, log }: { kafka: Kafka; redis: Redis; log: Log }): Promise<Consumer> {
  const consumer = createWorkerConsumer(kafka, CONSUMER_GROUPS.webhooks);
  await consumer.connect();
  // From the beginning for a new group: events older than a webhook are skipped by enqueueWebhookEvent.
  await consumer.subscribe({ topic: TOPICS.completed.name, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (!message.value) return;
      try {
        await enqueueJobEvent(redis, message.value.toString());
      } catch (error) {
        log("warn", "could not queue a job's webhook deliveries; the message is read again", { error: String(error) });
        throw error;
      }
    },
  });
  return consumer;
}
