import { ApiError } from "./errors";
import type { Redis } from "./redis";

// GCRA: one key per tenant and action holding the "theoretical arrival time" of the next request.
// A tenant may burst up to a minute's allowance, then gets `limit` requests a minute, smoothly.
const GCRA = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if tat < now then tat = now end
if tat - now > burst then return tat - now - burst end
local next = tat + interval
redis.call('SET', KEYS[1], next, 'PX', math.ceil(next - now) + 1000)
return 0`;

/**
 * Per-tenant limit on an action (e.g. submitting jobs), so one tenant cannot starve the others.
 * `perMinute` 0 turns it off. Throws a 429 with Retry-After when the tenant is over.
 */
export async function enforceRateLimit(redis: Redis, tenantId: string, action: string, perMinute: number, now = Date.now()): Promise<void> {
  if (perMinute <= 0) return;
  const interval = 60_000 / perMinute;
  const waitMs = Number(await redis.eval(GCRA, 1, `ratelimit:${action}:${tenantId}`, now, interval, 60_000 - interval));
  if (waitMs > 0) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ApiError("rate-limited", `Too many ${action} requests for this tenant: at most ${perMinute} a minute. Try again in ${seconds} s.`, undefined, {
      "Retry-After": String(seconds),
    });
  }
}
