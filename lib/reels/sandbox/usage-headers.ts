import type { SandboxDeps } from "./deps";

/**
 * Graph's usage headers, which clients read to slow down before they are refused:
 * `X-App-Usage` (the app's share of its hourly limit, in percent) and `X-Business-Use-Case-Usage`
 * (per account, with `estimated_time_to_regain_access` in minutes).
 */

/** Calls an account may make in an hour before the sandbox reports 100 % (Instagram's nominal 4,800). */
const CALLS_PER_HOUR = 4800;
const HOUR_MS = 60 * 60 * 1000;

const callsKey = (accountId: string, hour: number) => `sandbox:account:${accountId}:calls:${hour}`;

/**
 * Counts the call against its account's hour and reports the share used so far; a rate-limit
 * error reports the limit used up, with a minute to wait (Meta's estimates are whole minutes).
 */
export async function withUsageHeaders(deps: SandboxDeps, response: Response, accountId: string, throttled: boolean): Promise<Response> {
  const hour = Math.floor(deps.now() / HOUR_MS);
  const key = callsKey(accountId, hour);
  const [[, calls]] = ((await deps.redis.multi().incr(key).expire(key, 3600).exec()) ?? [[null, 0]]) as [[unknown, number]];
  const percent = throttled ? 100 : Math.min(99, Math.floor((Number(calls) * 100) / CALLS_PER_HOUR));
  const share = { call_count: percent, total_cputime: Math.floor(percent / 2), total_time: Math.floor(percent / 2) };
  response.headers.set("x-app-usage", JSON.stringify(share));
  response.headers.set("x-business-use-case-usage", JSON.stringify({ [accountId]: [{ type: "instagram", ...share, estimated_time_to_regain_access: throttled ? 1 : 0 }] }));
  return response;
}
