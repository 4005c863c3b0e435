import type { ReelAccount } from "../../config";
import { GraphError } from "../error";
import { describeGraphError } from "../error-table";
import type { SandboxDeps } from "./deps";
import { ACCOUNT_TTL_S, accountKeys, type FaultKind } from "./sandbox-account-keys";
import { deadTokenError, issueLongLivedToken, issueToken } from "./sandbox-tokens";
import { newGraphId } from "./store";

/**
 * The sandbox's own accounts, Meta's side of them: the ones REEL_ACCOUNTS configures and the ones
 * made at run time through the control surface, each with a token that can be made to expire or
 * be revoked (sandbox-tokens.ts), faults queued per kind of call, and a publishing limit of its own.
 * In Redis under `sandbox:` like the rest of the sandbox (sandbox-account-keys.ts).
 */

export { FAULT_KINDS, type FaultKind } from "./sandbox-account-keys";

export interface SandboxAccount {
  accountId: string;
  username: string;
  name: string;
  /** The tenant that holds it (REEL_ACCOUNTS', made for it, or claimed at a login dialog); undefined: no one yet. */
  tenantId?: string;
}

/** A configured account's username: stable, derived from its tenant. */
export function usernameOf(account: Pick<ReelAccount, "tenantId">): string {
  return `sandbox_${account.tenantId.toLowerCase().replace(/[^a-z0-9._]/g, "_")}`;
}

export async function findSandboxAccount(deps: SandboxDeps, accountId: string): Promise<SandboxAccount | undefined> {
  const configured = deps.config.REEL_ACCOUNTS.find((a) => a.accountId === accountId);
  if (configured)
    return {
      accountId,
      username: usernameOf(configured),
      name: `Sandbox (${configured.tenantId})`,
      tenantId: configured.tenantId,
    };
  if (!/^\d{6,20}$/.test(accountId)) return undefined;
  const profile = await deps.redis.hgetall(accountKeys.profile(accountId));
  if (!profile.username) return undefined;
  const account = { accountId, username: profile.username, name: profile.name || profile.username };
  return profile.tenant ? { ...account, tenantId: profile.tenant } : account;
}

/**
 * A new account with a valid token, as `POST /graph/_sandbox/accounts` makes it. With
 * `tokenExpiresInS`, its token and the long-lived tokens its logins get lapse that many seconds
 * after they are issued, and count as old enough to refresh: a token near its end, to rehearse.
 * With `tenantId`, only that tenant's login dialogs offer it; without, the first tenant whose
 * dialog issues a code for it holds it from then on (account-claims.ts).
 */
export async function createSandboxAccount(
  deps: SandboxDeps,
  options: { username?: string; tokenExpiresInS?: number; tenantId?: string } = {},
): Promise<{ account_id: string; access_token: string }> {
  const { username, tokenExpiresInS, tenantId } = options;
  const accountId = newGraphId("178");
  const name = username ?? `sandbox_${accountId.slice(-6)}`;
  const lifetime = tokenExpiresInS === undefined ? [] : ["long_lived_expires_in", String(tokenExpiresInS)];
  const offered = tenantId ? accountKeys.held(tenantId) : accountKeys.unclaimed;
  await deps.redis
    .multi()
    .hset(
      accountKeys.profile(accountId),
      "username",
      name,
      "name",
      name,
      ...lifetime,
      ...(tenantId ? ["tenant", tenantId] : []),
    )
    .expire(accountKeys.profile(accountId), ACCOUNT_TTL_S)
    .zadd(offered, deps.now(), accountId)
    .zremrangebyscore(offered, "-inf", deps.now() - ACCOUNT_TTL_S * 1000)
    .expire(offered, ACCOUNT_TTL_S)
    .exec();
  const accessToken =
    tokenExpiresInS === undefined
      ? await issueToken(deps, accountId)
      : await issueLongLivedToken(deps, accountId, tokenExpiresInS);
  return { account_id: accountId, access_token: accessToken };
}

/** How long the account's new long-lived tokens last, in seconds, when it was made with its own; undefined: Meta's 60 days. */
export async function longLivedLifetimeOf(deps: SandboxDeps, accountId: string): Promise<number | undefined> {
  const own = await deps.redis.hget(accountKeys.profile(accountId), "long_lived_expires_in");
  return own ? Number(own) : undefined;
}

/** The next `count` calls of that kind answer this error; a new fault for the same kind replaces the old one. */
export async function queueFault(
  deps: SandboxDeps,
  accountId: string,
  fault: { on: FaultKind; code: number; error_subcode?: number; count: number },
): Promise<void> {
  const key = accountKeys.fault(accountId, fault.on);
  const fields = {
    code: String(fault.code),
    error_subcode: fault.error_subcode === undefined ? "" : String(fault.error_subcode),
    count: String(fault.count),
  };
  await deps.redis.multi().del(key).hset(key, fields).expire(key, ACCOUNT_TTL_S).exec();
}

// Takes one call off a queued fault; the fault's code and subcode while any are left.
const TAKE_FAULT = `
local left = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
if left <= 0 then return nil end
if left == 1 then
  local fault = redis.call('HMGET', KEYS[1], 'code', 'error_subcode')
  redis.call('DEL', KEYS[1])
  return fault
end
redis.call('HINCRBY', KEYS[1], 'count', -1)
return redis.call('HMGET', KEYS[1], 'code', 'error_subcode')`;

/** The Graph error this call answers with, when a fault is queued for its account and kind. */
export async function takeFault(
  deps: SandboxDeps,
  accountId: string,
  kind: FaultKind,
): Promise<GraphError | undefined> {
  const taken = (await deps.redis.eval(TAKE_FAULT, 1, accountKeys.fault(accountId, kind))) as [string, string] | null;
  if (!taken) return undefined;
  const code = Number(taken[0]);
  const subcode = taken[1] ? Number(taken[1]) : undefined;
  const now = deps.now();
  const meta = META_MESSAGES[`${code}/${subcode ?? ""}`]?.(now);
  if (meta) return new GraphError({ code, subcode, ...meta });
  const info = describeGraphError(code, subcode);
  // is_transient as Meta sets it: the table's word for the code (GraphError's default).
  return new GraphError({
    code,
    subcode,
    message: `(#${code}) ${info.meaning[0]!.toUpperCase()}${info.meaning.slice(1)} (a fault queued through the sandbox's control surface)`,
  });
}

/** Meta's own words for the errors a rehearsal queues most, so a queued fault reads like the real one. */
const META_MESSAGES: Record<
  string,
  (now: number) => { message: string; userTitle?: string; userMessage?: string; type?: string }
> = {
  "190/463": (now) => ({ message: deadTokenError("expired", now, now - 60 * 60_000).message }),
  "190/460": (now) => ({ message: deadTokenError("revoked", now).message }),
  "104/": () => ({ message: "An access token is required to request this resource." }),
  "4/": () => ({ message: "(#4) Application request limit reached" }),
  "4/2207051": () => ({
    message: "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
    userTitle: "Action blocked",
    userMessage:
      "The publishing action is suspected to be spam. We restrict certain activity to protect our community.",
  }),
  "80002/": () => ({
    message: "(#80002) There have been too many calls to this Instagram account. Wait a bit and try again.",
  }),
  "9/2207042": () => ({
    message: "You reached maximum number of posts that is allowed to be published by Content Publishing API.",
    userTitle: "Max. number of posts reached",
    userMessage: "You reached maximum number of posts that is allowed to be published by Content Publishing API.",
  }),
  "9007/2207027": () => ({
    message: "Media ID is not available",
    userTitle: "Media Not Ready",
    userMessage: "The media is not ready for publishing, please wait for a moment",
  }),
  "-1/2207001": () => ({
    message: "An unexpected error has occurred. Please retry your request later.",
    userTitle: "Instagram server error",
    userMessage: "Instagram server error. Try again.",
  }),
  "24/2207008": () => ({
    message: "Media builder does not exist or has expired",
    userTitle: "Media builder not found",
    userMessage: "Temporary error publishing a container. Try again.",
  }),
};

/** The account's moving-24 h publishing limit: its own when set through the control surface, else SANDBOX_PUBLISH_LIMIT. */
export async function publishLimitOf(deps: SandboxDeps, accountId: string): Promise<number> {
  const own = await deps.redis.hget(accountKeys.profile(accountId), "quota_total");
  return own === null ? deps.config.SANDBOX_PUBLISH_LIMIT : Number(own);
}

export async function setPublishLimit(deps: SandboxDeps, accountId: string, quotaTotal: number): Promise<void> {
  await deps.redis
    .multi()
    .hset(accountKeys.profile(accountId), "quota_total", String(quotaTotal))
    .expire(accountKeys.profile(accountId), ACCOUNT_TTL_S)
    .exec();
}

/** How long the account's new containers take to process at least, when set through the control surface. */
export async function processingMsOf(deps: SandboxDeps, accountId: string): Promise<number | undefined> {
  const own = await deps.redis.hget(accountKeys.profile(accountId), "processing_ms");
  return own === null || own === "" ? undefined : Number(own);
}

/** Sets (null: clears) the processing time of the account's containers created from now on. */
export async function setProcessingMs(
  deps: SandboxDeps,
  accountId: string,
  processingMs: number | null,
): Promise<void> {
  const key = accountKeys.profile(accountId);
  if (processingMs === null) await deps.redis.hdel(key, "processing_ms");
  else await deps.redis.multi().hset(key, "processing_ms", String(processingMs)).expire(key, ACCOUNT_TTL_S).exec();
}
