import type { Redis } from "../redis";
import { GCRA, gcraArgs, overLimit, rateLimited, tenantRateLimit, waitSeconds } from "../rate-limit";

/**
 * Per-tenant limit on an action (e.g. resending webhooks), so one tenant cannot starve the others.
 * `perMinute` 0 turns it off. Throws a 429 with Retry-After when the tenant is over. Submissions
 * take theirs in the claim of the work they submit (lib/accept, `submitsPerMinute`).
 */
export async function enforceRateLimit(
  redis: Redis,
  tenantId: string,
  action: string,
  perMinute: number,
  now = Date.now(),
): Promise<void> {
  const limit = tenantRateLimit(tenantId, action, perMinute);
  if (!limit) return;
  const waitMs = Number(await GCRA.run(redis, [limit.key], [...gcraArgs(perMinute, now), "take"]));
  if (waitMs > 0) throw overLimit(limit, waitMs);
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
  return waitSeconds(Number(await GCRA.run(redis, [key], [...gcraArgs(perMinute, now), mode])));
}
