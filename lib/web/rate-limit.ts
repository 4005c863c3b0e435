import { ApiError } from "../errors";
import type { Redis } from "../redis";
import { redisScript } from "../redis-script";

// GCRA: one key per tenant and action holding the "theoretical arrival time" of the next request.
// A tenant may burst up to a minute's allowance, then gets `limit` requests a minute, smoothly.
const GCRA = redisScript(`
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if tat < now then tat = now end
if tat - now > burst then return tat - now - burst end
if ARGV[4] == 'peek' then return 0 end
local next = tat + interval
redis.call('SET', KEYS[1], next, 'PX', math.ceil(next - now) + 1000)
return 0`);

/**
 * Per-tenant limit on an action (e.g. submitting jobs), so one tenant cannot starve the others.
 * `perMinute` 0 turns it off. Throws a 429 with Retry-After when the tenant is over.
 */
export async function enforceRateLimit(
  redis: Redis,
  tenantId: string,
  action: string,
  perMinute: number,
  now = Date.now(),
): Promise<void> {
  const seconds = await gcra(redis, `ratelimit:${action}:${tenantId}`, perMinute, now, "take");
  if (seconds > 0)
    throw rateLimited(
      `Too many ${action} requests for this tenant: at most ${perMinute} a minute. Try again in ${seconds} s.`,
      seconds,
    );
}

/** Failed sign-ins and key checks one client address may make a minute (a burst of as many, then one every 6 s). */
export const AUTH_FAILURES_PER_MINUTE = 10;

/**
 * Throttles guessing keys or session cookies per client address. `check` refuses a throttled
 * address before its credentials are looked at (a right key must not answer differently from a
 * wrong one while throttled, or the throttle would still be an oracle); `fail` counts a failure.
 */
export interface AuthThrottle {
  check(address: string): Promise<void>;
  fail(address: string): Promise<void>;
}

export function redisAuthThrottle(redis: Redis, perMinute = AUTH_FAILURES_PER_MINUTE): AuthThrottle {
  const key = (address: string) => `ratelimit:auth-failure:${address}`;
  const refuse = (seconds: number) => {
    if (seconds > 0)
      throw rateLimited(
        `Too many failed sign-ins or API key checks from this address. Try again in ${seconds} s.`,
        seconds,
      );
  };
  return {
    check: async (address) => refuse(await gcra(redis, key(address), perMinute, Date.now(), "peek")),
    fail: async (address) => refuse(await gcra(redis, key(address), perMinute, Date.now(), "take")),
  };
}

/** Seconds to wait before `key` may act again (0: now); "take" also counts this action. */
async function gcra(redis: Redis, key: string, perMinute: number, now: number, mode: "take" | "peek"): Promise<number> {
  if (perMinute <= 0) return 0;
  const interval = 60_000 / perMinute;
  const waitMs = Number(await GCRA.run(redis, [key], [now, interval, 60_000 - interval, mode]));
  return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0;
}

const rateLimited = (detail: string, seconds: number) =>
  new ApiError("rate-limited", detail, undefined, { "Retry-After": String(seconds) });
