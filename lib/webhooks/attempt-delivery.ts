import type { Dispatcher } from "undici";
import type { Redis } from "../redis";
import { nextAttemptAt, type RetryPolicy } from "./backoff";
import { DELIVERY_TTL_S, MAX_ATTEMPTS_KEPT, webhookKeys } from "./keys";
import { sendWebhook } from "./send-webhook";
import { parseWebhookRecord } from "./store";

/** One attempt as the deliveries endpoint shows it. */
export interface AttemptRecord {
  id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  attempted_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
  error?: string;
}

export interface AttemptDeps {
  redis: Redis;
  dispatcher: Dispatcher;
  timeoutMs: number;
  retry: RetryPolicy;
  now?: () => number;
  random?: () => number;
}

// Claims due deliveries: each one's score moves to the end of its lease, so no other worker takes
// it while this attempt runs, and a worker that dies leaves it to be taken again when the lease
// ends (at least once). The new score is the claim's token.
const CLAIM = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], ARGV[3], id) end
return ids`;

export async function claimDueDeliveries(redis: Redis, now: number, limit: number, leaseMs: number): Promise<{ ids: string[]; token: number }> {
  const token = now + leaseMs;
  const ids = (await redis.eval(CLAIM, 1, webhookKeys.due, now, limit, token)) as string[];
  return { ids, token };
}

// Records an attempt. The log always gets it; the delivery's state moves only while this claim
// still holds it (a claim whose lease ran out may have been taken by another worker).
// ARGV: id, token, attempt, record, state, next (ms or ''), now (ms), ttl, max kept, window ms, reason
const RECORD = `
redis.call('LPUSH', KEYS[3], ARGV[4])
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[9]) - 1)
redis.call('EXPIRE', KEYS[3], ARGV[8])
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[2], 'attempts', ARGV[3], 'state', ARGV[5], 'last_attempt_at', ARGV[7])
redis.call('HDEL', KEYS[2], 'claim')
redis.call('EXPIRE', KEYS[2], ARGV[8])
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[1], ARGV[6], ARGV[1]) else redis.call('ZREM', KEYS[1], ARGV[1]) end
if redis.call('EXISTS', KEYS[4]) == 0 then return 1 end
if ARGV[5] == 'delivered' then
  redis.call('HDEL', KEYS[4], 'failing_since')
  return 1
end
redis.call('HSETNX', KEYS[4], 'failing_since', ARGV[7])
if ARGV[5] == 'failed' and tonumber(ARGV[7]) - tonumber(redis.call('HGET', KEYS[4], 'failing_since')) >= tonumber(ARGV[10]) then
  redis.call('HSET', KEYS[4], 'disabled_at', ARGV[12], 'disabled_reason', ARGV[11])
end
return 1`;

// Drops a claimed delivery that will not be attempted (its webhook is gone or disabled).
const DROP = `
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'state', 'failed', 'dropped', ARGV[3]) end
return 1`;

export type AttemptOutcome = "delivered" | "retrying" | "failed" | "dropped";

/** Runs one claimed delivery's next attempt and records it; says how it went, for metrics. */
export async function attemptDelivery(deps: AttemptDeps, deliveryId: string, token: number): Promise<{ outcome: AttemptOutcome; eventType: string }> {
  const { redis } = deps;
  const now = deps.now ?? Date.now;
  const delivery = await redis.hgetall(webhookKeys.delivery(deliveryId));
  const webhook = delivery.webhook_id ? parseWebhookRecord(await redis.hgetall(webhookKeys.webhook(delivery.webhook_id))) : undefined;
  if (!delivery.id || !webhook || webhook.tenant_id !== delivery.tenant_id || webhook.disabled_at) {
    const why = !delivery.id ? "expired" : !webhook ? "webhook deleted" : "webhook disabled";
    await redis.eval(DROP, 2, webhookKeys.due, webhookKeys.delivery(deliveryId), deliveryId, String(token), why);
    return { outcome: "dropped", eventType: delivery.event_type ?? "unknown" };
  }
  const attempt = Number(delivery.attempts || 0) + 1;
  // Marks the attempt under way, so a resend waits for its outcome instead of starting a second one.
  await redis.hset(webhookKeys.delivery(deliveryId), "claim", String(token));
  const started = now();
  const result = await sendWebhook({ url: webhook.url, secret: webhook.secret, messageId: deliveryId, body: delivery.body, timestampMs: started, timeoutMs: deps.timeoutMs, dispatcher: deps.dispatcher });
  const finished = now();
  const next = result.ok ? null : nextAttemptAt(deps.retry, attempt, Number(delivery.retry_from) || started, finished, deps.random);
  const state = result.ok ? "delivered" : next === null ? "failed" : "pending";
  const record: AttemptRecord = {
    id: deliveryId,
    event_type: delivery.event_type,
    attempt,
    status_code: result.statusCode,
    attempted_at: new Date(started).toISOString(),
    delivered_at: result.ok ? new Date(finished).toISOString() : null,
    next_attempt_at: next === null ? null : new Date(next).toISOString(),
    ...(result.error ? { error: result.error } : {}),
  };
  const hours = Math.round((deps.retry.windowMs / 3_600_000) * 10) / 10;
  const reason = `Every attempt failed for ${hours} h; the last: ${result.error ?? "no answer"}. Fix the endpoint, then create the webhook again.`;
  await redis.eval(
    RECORD,
    4,
    webhookKeys.due,
    webhookKeys.delivery(deliveryId),
    webhookKeys.attempts(webhook.id),
    webhookKeys.webhook(webhook.id),
    deliveryId,
    String(token),
    attempt,
    JSON.stringify(record),
    state,
    next === null ? "" : next,
    finished,
    DELIVERY_TTL_S,
    MAX_ATTEMPTS_KEPT,
    deps.retry.windowMs,
    reason,
    new Date(finished).toISOString(),
  );
  return { outcome: state === "pending" ? "retrying" : state, eventType: delivery.event_type };
}
