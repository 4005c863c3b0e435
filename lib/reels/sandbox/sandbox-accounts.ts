import { createHash, randomBytes } from "node:crypto";
import type { ReelAccount } from "../../config";
import { GraphError } from "../graph-error";
import { describeGraphError } from "../graph-error-table";
import type { SandboxDeps } from "./deps";
import { newGraphId } from "./store";

/**
 * The sandbox's own accounts, Meta's side of them: the ones REEL_ACCOUNTS configures and the ones
 * made at run time through the control surface, each with a token that can be made to expire or
 * be revoked, faults queued per kind of call, and a publishing limit of its own. In Redis under
 * `sandbox:` like the rest of the sandbox. Tokens are kept as digests only.
 */

export const TOKEN_STATES = ["valid", "expired", "revoked"] as const;
export type TokenState = (typeof TOKEN_STATES)[number];

/** The calls a fault can be queued for, by the control surface's names. */
export const FAULT_KINDS = ["media", "status", "media_publish", "upload"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface SandboxAccount {
  accountId: string;
  username: string;
  name: string;
}

/** Accounts made through the control surface are forgotten a month after their last change. */
const ACCOUNT_TTL_S = 30 * 24 * 60 * 60;

const accountKeys = {
  profile: (accountId: string) => `sandbox:account:${accountId}:profile`,
  token: (digest: string) => `sandbox:token:${digest}`,
  fault: (accountId: string, kind: FaultKind) => `sandbox:account:${accountId}:fault:${kind}`,
  /** zset of accounts made through the control surface, by creation time: the login dialog lists them. */
  made: "sandbox:accounts",
};

const digestOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** A configured account's username: stable, derived from its tenant. */
export function usernameOf(account: Pick<ReelAccount, "tenantId">): string {
  return `sandbox_${account.tenantId.toLowerCase().replace(/[^a-z0-9._]/g, "_")}`;
}

export async function findSandboxAccount(deps: SandboxDeps, accountId: string): Promise<SandboxAccount | undefined> {
  const configured = deps.config.REEL_ACCOUNTS.find((a) => a.accountId === accountId);
  if (configured) return { accountId, username: usernameOf(configured), name: `Sandbox (${configured.tenantId})` };
  if (!/^\d{6,20}$/.test(accountId)) return undefined;
  const profile = await deps.redis.hgetall(accountKeys.profile(accountId));
  return profile.username
    ? { accountId, username: profile.username, name: profile.name || profile.username }
    : undefined;
}

/** A new account with a valid token, as `POST /graph/_sandbox/accounts` makes it. */
export async function createSandboxAccount(
  deps: SandboxDeps,
  username?: string,
): Promise<{ account_id: string; access_token: string }> {
  const accountId = newGraphId("178");
  const name = username ?? `sandbox_${accountId.slice(-6)}`;
  await deps.redis
    .multi()
    .hset(accountKeys.profile(accountId), "username", name, "name", name)
    .expire(accountKeys.profile(accountId), ACCOUNT_TTL_S)
    .zadd(accountKeys.made, deps.now(), accountId)
    .zremrangebyscore(accountKeys.made, "-inf", deps.now() - ACCOUNT_TTL_S * 1000)
    .exec();
  const accessToken = await issueToken(deps, accountId);
  return { account_id: accountId, access_token: accessToken };
}

/** The accounts a person can pick in the login dialog: the configured ones and the newest made through the control surface. */
export async function listSandboxAccounts(deps: SandboxDeps, limit = 50): Promise<SandboxAccount[]> {
  const made = await deps.redis.zrevrange(accountKeys.made, 0, limit - 1);
  const ids = [...deps.config.REEL_ACCOUNTS.map((a) => a.accountId), ...made];
  const found = await Promise.all(ids.map((id) => findSandboxAccount(deps, id)));
  return found.filter((a): a is SandboxAccount => a !== undefined);
}

/**
 * A new valid token for the account, which becomes its current one; `expiresAt` (ms) makes it
 * expire by itself, as Meta's short-lived (1 h) and long-lived (60 days) tokens do.
 */
export async function issueToken(
  deps: SandboxDeps,
  accountId: string,
  expiresAt?: number,
  kind: "short" | "long" = "long",
): Promise<string> {
  const token = `IGSANDBOX${randomBytes(24).toString("base64url")}`;
  const digest = digestOf(token);
  await deps.redis
    .multi()
    .hset(
      accountKeys.token(digest),
      "account_id",
      accountId,
      "state",
      "valid",
      "kind",
      kind,
      "expires_at",
      expiresAt === undefined ? "" : String(expiresAt),
    )
    .expire(accountKeys.token(digest), ACCOUNT_TTL_S)
    .hset(accountKeys.profile(accountId), "token_digest", digest)
    .expire(accountKeys.profile(accountId), ACCOUNT_TTL_S)
    .exec();
  return token;
}

/**
 * Expires or revokes the account's current token (every call with it then answers 190), or issues
 * a new valid one; the old token stays dead either way.
 */
export async function setTokenState(
  deps: SandboxDeps,
  account: SandboxAccount,
  state: TokenState,
): Promise<{ access_token?: string }> {
  const profile = await deps.redis.hgetall(accountKeys.profile(account.accountId));
  const configured = deps.config.REEL_ACCOUNTS.find((a) => a.accountId === account.accountId);
  const current = profile.token_digest || (configured ? digestOf(configured.accessToken) : undefined);
  if (state === "valid") {
    // A token still working is revoked by the new one; an expired one keeps saying so.
    const was = current ? await deps.redis.hget(accountKeys.token(current), "state") : null;
    if (current && was !== "expired" && was !== "revoked") await markToken(deps, account.accountId, current, "revoked");
    return { access_token: await issueToken(deps, account.accountId) };
  }
  if (current) await markToken(deps, account.accountId, current, state);
  return {};
}

async function markToken(deps: SandboxDeps, accountId: string, digest: string, state: TokenState): Promise<void> {
  const fields =
    state === "expired"
      ? { account_id: accountId, state, expired_at: String(deps.now()) }
      : { account_id: accountId, state };
  await deps.redis
    .multi()
    .hset(accountKeys.token(digest), fields)
    .expire(accountKeys.token(digest), ACCOUNT_TTL_S)
    .exec();
}

/** The account a token belongs to, whether it still works (and since when it does not), and its kind; undefined for a token the sandbox never issued. */
export async function resolveToken(
  deps: SandboxDeps,
  token: string,
): Promise<{ accountId: string; state: TokenState; expiredAt?: number; kind: "short" | "long" } | undefined> {
  const stored = await deps.redis.hgetall(accountKeys.token(digestOf(token)));
  if (stored.account_id) {
    const lapsed = !!stored.expires_at && Number(stored.expires_at) <= deps.now();
    const state = lapsed && (stored.state || "valid") === "valid" ? "expired" : (stored.state as TokenState) || "valid";
    const expiredAt = stored.expired_at ? Number(stored.expired_at) : lapsed ? Number(stored.expires_at) : undefined;
    return {
      accountId: stored.account_id,
      state,
      kind: stored.kind === "short" ? "short" : "long",
      ...(expiredAt !== undefined ? { expiredAt } : {}),
    };
  }
  const configured = accountForToken(deps.config.REEL_ACCOUNTS, token);
  return configured ? { accountId: configured.accountId, state: "valid", kind: "long" } : undefined;
}

/** Compared by digest, so the time taken does not say which configured token matched. */
function accountForToken(accounts: readonly ReelAccount[], token: string): ReelAccount | undefined {
  const digest = digestOf(token);
  let found: ReelAccount | undefined;
  for (const account of accounts) if (digestOf(account.accessToken) === digest) found ??= account;
  return found;
}

/**
 * Graph's answers for a token that no longer works (error_subcode 463: expired; 460: invalidated).
 * 463 words both times as Meta does, in Pacific time: "Session has expired on Monday,
 * 19-Jun-23 06:29:46 PDT. The current time is Tuesday, 04-Jul-23 02:11:32 PDT."
 */
export function deadTokenError(state: Exclude<TokenState, "valid">, now: number, expiredAt: number = now): GraphError {
  if (state === "expired") {
    return new GraphError({
      code: 190,
      subcode: 463,
      message: `Error validating access token: Session has expired on ${pacificTime(expiredAt)}. The current time is ${pacificTime(now)}.`,
    });
  }
  return new GraphError({
    code: 190,
    subcode: 460,
    message:
      "Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.",
  });
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

const PACIFIC = new Intl.DateTimeFormat("en-US", {
  timeZone: "America/Los_Angeles",
  weekday: "long",
  day: "2-digit",
  month: "short",
  year: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
  timeZoneName: "short",
});

/** Meta's clock in its token messages: "Monday, 19-Jun-23 06:29:46 PDT" (PST in winter). */
export function pacificTime(ms: number): string {
  const p = Object.fromEntries(PACIFIC.formatToParts(new Date(ms)).map((part) => [part.type, part.value]));
  return `${p.weekday}, ${p.day}-${p.month}-${p.year} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName}`;
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
