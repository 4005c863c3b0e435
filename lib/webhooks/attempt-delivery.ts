import type { Dispatcher } from "undici";
import type { Redis } from "../redis";
import { nextAttemptAt, type RetryPolicy } from "./backoff";
import { DELIVERY_TTL_S, MAX_ATTEMPTS_KEPT, syncDueTenant, TENANT_ATTEMPTS_IN_FLIGHT, webhookKeys } from "./keys";
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

// Claims due deliveries fairly: tenants with something due are taken in turn, one delivery each per
// round (the one waiting longest first), each tenant only while it has fewer than ARGV[4] attempts
// under way across the workers. A claimed delivery's score moves to the end of its lease, so no
// other worker takes it while this attempt runs, and a worker that dies leaves it to be taken
// again when the lease ends (at least once). The new score is the claim's token, also written to
// the delivery's `claim` in the same step, so a resend sees at once that an attempt is under way.
// KEYS: dueTenants, legacyDue. ARGV: now, limit, token, per-tenant cap, due prefix, in-flight prefix, delivery prefix.
const CLAIM = `
local legacy = redis.call('ZRANGE', KEYS[2], 0, 99, 'WITHSCORES')
for i = 1, #legacy, 2 do
  local tenant = redis.call('HGET', ARGV[7] .. legacy[i], 'tenant_id')
  if tenant then
    redis.call('ZADD', ARGV[5] .. tenant, legacy[i + 1], legacy[i])
    ${syncDueTenant("ARGV[5] .. tenant", "KEYS[1]", "tenant")}
  end
  redis.call('ZREM', KEYS[2], legacy[i])
end
local now, limit, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
local tenants = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
local open = {}
for i, tenant in ipairs(tenants) do
  redis.call('ZREMRANGEBYSCORE', ARGV[6] .. tenant, '-inf', now)
  open[i] = cap - redis.call('ZCARD', ARGV[6] .. tenant)
end
local claims = {}
local progress = true
while progress and #claims < limit * 2 do
  progress = false
  for i, tenant in ipairs(tenants) do
    if #claims >= limit * 2 then break end
    if open[i] > 0 then
      local head = redis.call('ZRANGEBYSCORE', ARGV[5] .. tenant, '-inf', now, 'LIMIT', 0, 1)[1]
      if head then
        redis.call('ZADD', ARGV[5] .. tenant, ARGV[3], head)
        redis.call('ZADD', ARGV[6] .. tenant, ARGV[3], head)
        if redis.call('EXISTS', ARGV[7] .. head) == 1 then redis.call('HSET', ARGV[7] .. head, 'claim', ARGV[3]) end
        claims[#claims + 1] = head
        claims[#claims + 1] = tenant
        open[i] = open[i] - 1
        progress = true
      end
    end
  end
end
for _, tenant in ipairs(tenants) do
  ${syncDueTenant("ARGV[5] .. tenant", "KEYS[1]", "tenant")}
end
return claims`;

/** A delivery claimed for one attempt, and the tenant whose queue it is in. */
export interface DeliveryClaim {
  id: string;
  tenantId: string;
}

export async function claimDueDeliveries(
  redis: Redis,
  now: number,
  limit: number,
  leaseMs: number,
  perTenant = TENANT_ATTEMPTS_IN_FLIGHT,
): Promise<{ claims: DeliveryClaim[]; token: number }> {
  const token = now + leaseMs;
  const flat = (await redis.eval(
    CLAIM,
    2,
    webhookKeys.dueTenants,
    webhookKeys.legacyDue,
    now,
    limit,
    token,
    perTenant,
    webhookKeys.due(""),
    webhookKeys.inFlight(""),
    webhookKeys.delivery(""),
  )) as string[];
  const claims: DeliveryClaim[] = [];
  for (let i = 0; i < flat.length; i += 2) claims.push({ id: flat[i] ?? "", tenantId: flat[i + 1] ?? "" });
  return { claims, token };
}

// Records an attempt. The log always gets it; the delivery's state moves only while this claim
// still holds it (a claim whose lease ran out may have been taken by another worker).
// A delivery's retry window starts at its first attempt (or at a resend of one that had ended).
// KEYS: the tenant's due set, the delivery, the attempt log, the webhook, dueTenants, the tenant's in-flight set.
// ARGV: id, token, attempt, record, state, next (ms or ''), now (ms), ttl, max kept, window ms, reason, disabled at,
// tenant, the attempt's start (ms), '1' to disable the webhook now (the endpoint answered 410 Gone)
const RECORD = `
redis.call('LPUSH', KEYS[3], ARGV[4])
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[9]) - 1)
redis.call('EXPIRE', KEYS[3], ARGV[8])
if tonumber(redis.call('ZSCORE', KEYS[6], ARGV[1])) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[6], ARGV[1]) end
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[2], 'attempts', ARGV[3], 'state', ARGV[5], 'last_attempt_at', ARGV[7])
redis.call('HSETNX', KEYS[2], 'retry_from', ARGV[14])
redis.call('HDEL', KEYS[2], 'claim')
redis.call('EXPIRE', KEYS[2], ARGV[8])
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[1], ARGV[6], ARGV[1]) else redis.call('ZREM', KEYS[1], ARGV[1]) end
${syncDueTenant("KEYS[1]", "KEYS[5]", "ARGV[13]")}
if redis.call('EXISTS', KEYS[4]) == 0 then return 1 end
if ARGV[5] == 'delivered' then
  redis.call('HDEL', KEYS[4], 'failing_since')
  return 1
end
redis.call('HSETNX', KEYS[4], 'failing_since', ARGV[7])
if ARGV[15] == '1' or (ARGV[5] == 'failed' and tonumber(ARGV[7]) - tonumber(redis.call('HGET', KEYS[4], 'failing_since')) >= tonumber(ARGV[10])) then
  redis.call('HSET', KEYS[4], 'disabled_at', ARGV[12], 'disabled_reason', ARGV[11])
end
return 1`;

// Drops a claimed delivery that will not be attempted (its webhook is gone or disabled).
// KEYS: the tenant's due set, the delivery, dueTenants, the tenant's in-flight set. ARGV: id, token, reason, tenant.
const DROP = `
if tonumber(redis.call('ZSCORE', KEYS[4], ARGV[1])) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[4], ARGV[1]) end
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
${syncDueTenant("KEYS[1]", "KEYS[3]", "ARGV[4]")}
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'state', 'failed', 'dropped', ARGV[3]) end
return 1`;

export type AttemptOutcome = "delivered" | "retrying" | "failed" | "dropped";

/** Runs one claimed delivery's next attempt and records it; says how it went, for metrics. */
export async function attemptDelivery(
  deps: AttemptDeps,
  claim: DeliveryClaim,
  token: number,
): Promise<{ outcome: AttemptOutcome; eventType: string }> {
  const { redis } = deps;
  const { id: deliveryId } = claim;
  const now = deps.now ?? Date.now;
  const delivery = await redis.hgetall(webhookKeys.delivery(deliveryId));
  const webhook = delivery.webhook_id
    ? parseWebhookRecord(await redis.hgetall(webhookKeys.webhook(delivery.webhook_id)))
    : undefined;
  if (!delivery.id || !webhook || webhook.tenant_id !== delivery.tenant_id || webhook.disabled_at) {
    const why = !delivery.id ? "expired" : !webhook ? "webhook deleted" : "webhook disabled";
    await dropDelivery(redis, claim, token, why);
    return { outcome: "dropped", eventType: delivery.event_type ?? "unknown" };
  }
  const attempt = Number(delivery.attempts || 0) + 1;
  const started = now();
  const result = await sendWebhook({
    url: webhook.url,
    secret: webhook.secret,
    messageId: deliveryId,
    body: delivery.body,
    timestampMs: started,
    timeoutMs: deps.timeoutMs,
    dispatcher: deps.dispatcher,
  });
  const finished = now();
  // 410 Gone: the endpoint asks for no more deliveries (Standard Webhooks: disable it). Otherwise a
  // Retry-After the endpoint sent is waited out, up to the longest wait between attempts.
  const gone = result.statusCode === 410;
  const backedOff =
    result.ok || gone
      ? null
      : nextAttemptAt(deps.retry, attempt, Number(delivery.retry_from) || started, finished, deps.random);
  const next =
    backedOff === null || result.retryAfterMs === undefined
      ? backedOff
      : Math.max(backedOff, finished + Math.min(result.retryAfterMs, deps.retry.maxMs));
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
  await recordAttempt(deps, claim, token, webhook.id, {
    attempt,
    record,
    state,
    next,
    started,
    finished,
    lastError: result.error,
    gone,
  });
  return { outcome: state === "pending" ? "retrying" : state, eventType: delivery.event_type };
}

/** Removes a delivery that can no longer be made (expired, its webhook deleted or disabled), saying why. */
async function dropDelivery(redis: Redis, claim: DeliveryClaim, token: number, why: string): Promise<void> {
  const { id: deliveryId, tenantId } = claim;
  await redis.eval(
    DROP,
    4,
    webhookKeys.due(tenantId),
    webhookKeys.delivery(deliveryId),
    webhookKeys.dueTenants,
    webhookKeys.inFlight(tenantId),
    deliveryId,
    String(token),
    why,
    tenantId,
  );
}

/** Records an attempt and its outcome: delivered, due again at `next`, or failed for good (the webhook disabled, with the reason). */
async function recordAttempt(
  deps: AttemptDeps,
  claim: DeliveryClaim,
  token: number,
  webhookId: string,
  outcome: {
    attempt: number;
    record: AttemptRecord;
    state: "delivered" | "failed" | "pending";
    next: number | null;
    started: number;
    finished: number;
    lastError: string | undefined;
    /** The endpoint answered 410 Gone: the webhook is disabled now. */
    gone: boolean;
  },
): Promise<void> {
  const { id: deliveryId, tenantId } = claim;
  const due = webhookKeys.due(tenantId);
  const { attempt, record, state, next, started, finished, lastError, gone } = outcome;
  const hours = Math.round((deps.retry.windowMs / 3_600_000) * 10) / 10;
  const reason = gone
    ? "The endpoint answered 410 Gone: it asks for no more deliveries. Create the webhook again to receive events."
    : `Every attempt failed for ${hours} h; the last: ${lastError ?? "no answer"}. Fix the endpoint, then create the webhook again.`;
  await deps.redis.eval(
    RECORD,
    6,
    due,
    webhookKeys.delivery(deliveryId),
    webhookKeys.attempts(webhookId),
    webhookKeys.webhook(webhookId),
    webhookKeys.dueTenants,
    webhookKeys.inFlight(tenantId),
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
    tenantId,
    started,
    gone ? "1" : "0",
  );
}
