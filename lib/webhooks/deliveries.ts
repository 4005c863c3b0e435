import { z } from "zod";
import { ApiError } from "../errors";
import type { Redis } from "../redis";
import type { AttemptRecord } from "./attempt-delivery";
import { DELIVERY_TTL_S, syncDueTenant, webhookKeys } from "./keys";
import { readWebhookOrThrow } from "./store";

export const deliveriesQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** The webhook's attempts, newest first (kept 7 days, at most MAX_ATTEMPTS_KEPT). */
export async function listDeliveryAttempts(
  redis: Redis,
  tenantId: string,
  webhookId: string,
  limit: number,
): Promise<{ data: AttemptRecord[] }> {
  await readWebhookOrThrow(redis, tenantId, webhookId);
  const raw = await redis.lrange(webhookKeys.attempts(webhookId), 0, limit - 1);
  return { data: raw.map((line) => JSON.parse(line) as AttemptRecord) };
}

// Makes the delivery due now, unless it is being attempted right now (its score is the claim's
// token, a lease not over yet: that attempt's outcome decides). A claim whose lease ran out (its
// worker died) holds nothing: the delivery is due anyway, and a late record of that claim moves
// nothing once the score has changed. Only a delivery that had ended
// (delivered or given up) gets a fresh retry window: resending a pending one again and again must
// not keep it alive for ever.
const RESEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if score and tonumber(score) > tonumber(ARGV[2]) and tonumber(redis.call('HGET', KEYS[1], 'claim') or '-1') == tonumber(score) then return 2 end
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then redis.call('HSET', KEYS[1], 'retry_from', ARGV[2]) end
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('HDEL', KEYS[1], 'dropped')
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
${syncDueTenant("KEYS[2]", "KEYS[3]", "ARGV[4]")}
return 1`;

/** Sends a delivery again now (same message id, so the receiver can tell it is a repeat). */
export async function resendDelivery(
  redis: Redis,
  tenantId: string,
  webhookId: string,
  deliveryId: string,
  now = Date.now(),
): Promise<{ id: string; status: "pending" }> {
  const webhook = await readWebhookOrThrow(redis, tenantId, webhookId);
  if (webhook.disabled_at)
    throw new ApiError("conflict", "The webhook is disabled; create it again to receive deliveries.");
  const owner = await redis.hget(webhookKeys.delivery(deliveryId), "webhook_id");
  if (owner !== webhookId) throw new ApiError("not-found", "No such delivery (deliveries are kept 7 days).");
  const result = await redis.eval(
    RESEND,
    3,
    webhookKeys.delivery(deliveryId),
    webhookKeys.due(tenantId),
    webhookKeys.dueTenants,
    deliveryId,
    now,
    DELIVERY_TTL_S,
    tenantId,
  );
  if (result === 0) throw new ApiError("not-found", "No such delivery (deliveries are kept 7 days).");
  if (result === 2)
    throw new ApiError("conflict", "The delivery is being attempted right now; its outcome is in the log shortly.");
  return { id: deliveryId, status: "pending" };
}
