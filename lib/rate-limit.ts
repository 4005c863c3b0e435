import { ApiError } from "./errors";
import { redisScript } from "./redis-script";

// GCRA: one key per tenant and action holding the "theoretical arrival time" of the next request.
// A tenant may burst up to a minute's allowance, then gets `limit` requests a minute, smoothly.
// A Lua function, so a script that takes a budget in the same step as its own writes (the claim of
// lib/accept) shares it: the milliseconds to wait, 0 when the request may go (and `take` counted it).
export const GCRA_FUNCTION = `
local function gcra(key, now, interval, burst, take)
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  if tat - now > burst then return math.ceil(tat - now - burst) end
  if not take then return 0 end
  local next = tat + interval
  redis.call('SET', key, next, 'PX', math.ceil(next - now) + 1000)
  return 0
end`;
export const GCRA = redisScript(`${GCRA_FUNCTION}
return gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] ~= 'peek')`);

/** A tenant's budget for an action: `perMinute` a minute, with a minute's burst. */
export interface RateLimit {
  key: string;
  action: string;
  perMinute: number;
}

/** The budget of `tenantId` for `action`; undefined when `perMinute` is 0 (no limit). */
export function tenantRateLimit(tenantId: string, action: string, perMinute: number): RateLimit | undefined {
  return perMinute > 0 ? { key: `ratelimit:${action}:${tenantId}`, action, perMinute } : undefined;
}

/** GCRA_FUNCTION's now, interval and burst for a budget of `perMinute` (> 0). */
export function gcraArgs(perMinute: number, now: number): [number, number, number] {
  const interval = 60_000 / perMinute;
  return [now, interval, 60_000 - interval];
}

/** The 429 for a tenant over `limit` that must wait `waitMs` (> 0). */
export function overLimit(limit: RateLimit, waitMs: number): ApiError {
  const seconds = waitSeconds(waitMs);
  return rateLimited(
    `Too many ${limit.action} requests for this tenant: at most ${limit.perMinute} a minute. Try again in ${seconds} s.`,
    seconds,
  );
}

/** Whole seconds to wait (at least 1) for `waitMs` > 0; 0 when it is 0. */
export const waitSeconds = (waitMs: number) => (waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0);

export const rateLimited = (detail: string, seconds: number) =>
  new ApiError("rate-limited", detail, undefined, { "Retry-After": String(seconds) });
