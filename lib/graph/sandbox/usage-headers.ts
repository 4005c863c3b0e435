import { randomBytes } from "node:crypto";
import { GraphError } from "../error";
import type { SandboxDeps } from "./deps";

/**
 * Graph's usage headers, which clients read to slow down before they are refused:
 * `X-App-Usage` (the app's share of its limit, in percent) and `X-Business-Use-Case-Usage`
 * (per account, with `estimated_time_to_regain_access` in minutes). Meta sends them on answers,
 * not only on errors, "once enough calls have been made" (graph-reference.md) without saying how
 * many: the sandbox sends them on every answer to a call with a valid token once the account has
 * made an earlier call within the window, and always while figures are set or a call is throttled.
 *
 * By default the figures count the account's calls in the last hour, a sliding window as Meta's
 * limits are (not a clock hour that empties on the hour), against Instagram's nominal 4,800.
 * The control surface can set them instead (PUT /_sandbox/accounts/{id}/usage, and the app's
 * figures with it), so pacing is rehearsable: at 100 % of any figure, or while an
 * estimated_time_to_regain_access is set, calls are refused as Meta refuses them (80002 for the
 * account, 4 for the app).
 */

/** Calls an account may make in the window before the sandbox reports 100 % (Instagram's nominal 4,800). */
const CALLS_PER_WINDOW = 4800;
const WINDOW_MS = 60 * 60 * 1000;
/** Set figures are forgotten after a day: a rehearsal never throttles an account for good. */
const USAGE_TTL_S = 24 * 60 * 60;

/** A sorted set of the account's calls in the window, scored by when they were made. */
const callsKey = (accountId: string) => `sandbox:account:${accountId}:calls`;
export const usageKeys = {
  account: (accountId: string) => `sandbox:account:${accountId}:usage`,
  app: "sandbox:app:usage",
};

export interface UsageFigures {
  call_count: number;
  total_cputime: number;
  total_time: number;
}

export interface SetUsage {
  /** The account's figures (X-Business-Use-Case-Usage), in percent. */
  call_count?: number;
  total_cputime?: number;
  total_time?: number;
  /** Minutes until the account's calls are let through again; 0: not throttled. */
  estimated_time_to_regain_access?: number;
  /** The app's figures (X-App-Usage), in percent. */
  app?: Partial<UsageFigures>;
}

/** Sets the figures the sandbox reports (and acts on) for an account and, with `app`, for the app; an empty body clears both. */
export async function setUsage(deps: SandboxDeps, accountId: string, usage: SetUsage): Promise<void> {
  const { app, ...account } = usage;
  const multi = deps.redis.multi().del(usageKeys.account(accountId));
  if (Object.keys(account).length > 0)
    multi.hset(usageKeys.account(accountId), toStrings(account)).expire(usageKeys.account(accountId), USAGE_TTL_S);
  if (app !== undefined || Object.keys(usage).length === 0) multi.del(usageKeys.app);
  if (app && Object.keys(app).length > 0) multi.hset(usageKeys.app, toStrings(app)).expire(usageKeys.app, USAGE_TTL_S);
  await multi.exec();
}

interface Reported {
  app: UsageFigures;
  account: UsageFigures & { estimated_time_to_regain_access: number };
  /** Some figures were set through the control surface. */
  set: boolean;
}

/**
 * What the headers of this account's next answer say: the set figures, or its calls in the window;
 * a rate-limit refusal reports its own budget (the app's for code 4, the account's otherwise) used up.
 */
async function reported(
  deps: SandboxDeps,
  accountId: string,
  counted: number,
  throttledCode: number | undefined,
): Promise<Reported> {
  const [setAccount, setApp] = await Promise.all([
    deps.redis.hgetall(usageKeys.account(accountId)),
    deps.redis.hgetall(usageKeys.app),
  ]);
  const share = (percent: number) => ({
    call_count: percent,
    total_cputime: Math.floor(percent / 2),
    total_time: Math.floor(percent / 2),
  });
  const percent = Math.min(99, Math.floor((counted * 100) / CALLS_PER_WINDOW));
  const appThrottled = throttledCode === 4;
  const accountThrottled = throttledCode !== undefined && !appThrottled;
  return {
    app: { ...share(appThrottled ? 100 : percent), ...figures(setApp) },
    account: {
      ...share(accountThrottled ? 100 : percent),
      estimated_time_to_regain_access: accountThrottled ? 1 : 0,
      ...figures(setAccount),
    },
    set: Object.keys(setAccount).length > 0 || Object.keys(setApp).length > 0,
  };
}

/**
 * The refusal a call meets while the set figures say the account (80002) or the app (4) is at its
 * limit; undefined when calls go through.
 */
export async function throttleFor(deps: SandboxDeps, accountId: string): Promise<GraphError | undefined> {
  const [account, app] = await Promise.all([
    deps.redis.hgetall(usageKeys.account(accountId)),
    deps.redis.hgetall(usageKeys.app),
  ]);
  const a = figures(account);
  if (Number(a.estimated_time_to_regain_access ?? 0) > 0 || atLimit(a)) {
    return new GraphError({
      code: 80002,
      message: "(#80002) There have been too many calls to this Instagram account. Wait a bit and try again.",
      isTransient: true,
    });
  }
  if (atLimit(figures(app)))
    return new GraphError({ code: 4, message: "(#4) Application request limit reached", isTransient: true });
  return undefined;
}

/**
 * Counts the call against its account's window and reports the share used so far (or the set
 * figures); a rate-limit refusal (its code in `throttledCode`) reports the limit used up, with a
 * minute to wait (Meta's estimates are whole minutes). The account's first call in the window
 * carries no headers.
 */
export async function withUsageHeaders(
  deps: SandboxDeps,
  response: Response,
  accountId: string,
  throttledCode?: number,
): Promise<Response> {
  const now = deps.now();
  const key = callsKey(accountId);
  const results = await deps.redis
    .multi()
    .zremrangebyscore(key, "-inf", now - WINDOW_MS)
    .zcard(key)
    .zadd(key, now, `${now}:${randomBytes(6).toString("hex")}`)
    .pexpire(key, WINDOW_MS)
    .exec();
  const earlier = Number(results?.[1]?.[1] ?? 0);
  const { app, account, set } = await reported(deps, accountId, earlier + 1, throttledCode);
  if (earlier === 0 && !set && throttledCode === undefined) return response;
  response.headers.set("x-app-usage", JSON.stringify(app));
  response.headers.set(
    "x-business-use-case-usage",
    JSON.stringify({ [accountId]: [{ type: "instagram", ...account }] }),
  );
  return response;
}

function figures(hash: Record<string, string>): Partial<UsageFigures & { estimated_time_to_regain_access: number }> {
  const out: Record<string, number> = {};
  for (const field of ["call_count", "total_cputime", "total_time", "estimated_time_to_regain_access"]) {
    if (hash[field] !== undefined && hash[field] !== "") out[field] = Number(hash[field]);
  }
  return out;
}

function atLimit(f: Partial<UsageFigures>): boolean {
  return Math.max(f.call_count ?? 0, f.total_cputime ?? 0, f.total_time ?? 0) >= 100;
}

function toStrings(values: object): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]));
}
