import { createHash } from "node:crypto";
import type { Redis } from "../redis";
import type { WebhookEventType } from "./events";
import { DELIVERY_TTL_S, webhookKeys } from "./keys";
import { listWebhookRecords } from "./store";

export interface WebhookEvent {
  tenantId: string;
  type: WebhookEventType;
  /**
   * Names this occurrence of the event (e.g. the job id, or a publication id and its updated_at):
   * the same occurrence enqueued again (a redelivered audit message) makes no second delivery.
   */
  occurrence: string;
  /** When it happened; webhooks created after it do not get it. */
  at: Date;
  /** The job or publication as GET returns it; read only when some webhook wants the event (undefined: gone, nothing sent). */
  data: () => Promise<unknown>;
}

// A delivery is created once (its id derives from the webhook and the occurrence), and is due at once.
const ENQUEUE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[1])))
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return 1`;

/** The Standard Webhooks message id of one occurrence for one webhook: stable, so receivers can drop repeats. */
export function deliveryIdOf(webhookId: string, type: WebhookEventType, occurrence: string): string {
  return `msg_${createHash("sha256").update(`${webhookId}\n${type}\n${occurrence}`).digest("hex").slice(0, 32)}`;
}

/** Queues the event for each of the tenant's enabled webhooks that subscribed to it; returns the delivery ids. */
export async function enqueueWebhookEvent(redis: Redis, event: WebhookEvent, now = new Date()): Promise<string[]> {
  const webhooks = (await listWebhookRecords(redis, event.tenantId)).filter(
    (w) => !w.disabled_at && w.events.includes(event.type) && Date.parse(w.created_at) <= event.at.getTime(),
  );
  if (webhooks.length === 0) return [];
  const data = await event.data();
  if (data === undefined) return [];
  const body = JSON.stringify({ type: event.type, timestamp: event.at.toISOString(), data });
  const created: string[] = [];
  for (const webhook of webhooks) {
    const id = deliveryIdOf(webhook.id, event.type, event.occurrence);
    const fields = {
      id,
      webhook_id: webhook.id,
      tenant_id: event.tenantId,
      event_type: event.type,
      body,
      created_at: now.toISOString(),
      retry_from: String(now.getTime()),
      attempts: "0",
      state: "pending",
    };
    const added = await redis.eval(ENQUEUE, 2, webhookKeys.delivery(id), webhookKeys.due, JSON.stringify(Object.entries(fields).flat()), DELIVERY_TTL_S, now.getTime(), id);
    if (added === 1) created.push(id);
  }
  return created;
}
