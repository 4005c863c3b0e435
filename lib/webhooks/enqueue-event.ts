import { createHash } from "node:crypto";
import type { Redis } from "../redis";
import type { WebhookEventType } from "./events";
import type { AttemptRecord } from "./attempt-delivery";
import { DELIVERY_TTL_S, MAX_ATTEMPTS_KEPT, MAX_PENDING_PER_TENANT, syncDueTenant, webhookKeys } from "./keys";
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

// A delivery is created once (its id derives from the webhook and the occurrence), and is due at
// once in its tenant's queue, unless that queue is full: then the webhook's attempt log says so.
// KEYS: delivery, tenant's due set, dueTenants, the webhook's attempt log.
// ARGV: fields, ttl, now, id, tenant, max pending, the log entry, max log entries kept.
const ENQUEUE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then
  redis.call('LPUSH', KEYS[4], ARGV[7])
  redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[8]) - 1)
  redis.call('EXPIRE', KEYS[4], ARGV[2])
  return 2
end
redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[1])))
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
${syncDueTenant("KEYS[2]", "KEYS[3]", "ARGV[5]")}
return 1`;

/** The Standard Webhooks message id of one occurrence for one webhook: stable, so receivers can drop repeats. */
export function deliveryIdOf(webhookId: string, type: WebhookEventType, occurrence: string): string {
  return `msg_${createHash("sha256").update(`${webhookId}\n${type}\n${occurrence}`).digest("hex").slice(0, 32)}`;
}

/** Queues the event for each of the tenant's enabled webhooks that subscribed to it; returns the delivery ids. */
export async function enqueueWebhookEvent(
  redis: Redis,
  event: WebhookEvent,
  now = new Date(),
  maxPending = MAX_PENDING_PER_TENANT,
): Promise<string[]> {
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
      attempts: "0",
      state: "pending",
    };
    const added = await redis.eval(
      ENQUEUE,
      4,
      webhookKeys.delivery(id),
      webhookKeys.due(event.tenantId),
      webhookKeys.dueTenants,
      webhookKeys.attempts(webhook.id),
      JSON.stringify(Object.entries(fields).flat()),
      DELIVERY_TTL_S,
      now.getTime(),
      id,
      event.tenantId,
      maxPending,
      JSON.stringify(notQueued(id, event.type, now, maxPending)),
      MAX_ATTEMPTS_KEPT,
    );
    if (added === 1) created.push(id);
  }
  return created;
}

/** The attempt log's entry for an event its tenant's full queue could not take. */
function notQueued(id: string, type: WebhookEventType, now: Date, maxPending: number): AttemptRecord {
  const error = `Not sent: this tenant already had ${maxPending} deliveries waiting (its endpoints are slow or failing)`;
  return {
    id,
    event_type: type,
    attempt: 0,
    status_code: null,
    attempted_at: now.toISOString(),
    delivered_at: null,
    next_attempt_at: null,
    error,
  };
}
