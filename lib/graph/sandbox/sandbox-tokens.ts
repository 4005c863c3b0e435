import { randomBytes } from "node:crypto";
import type { ReelAccount } from "../../config";
import { GraphError } from "../error";
import type { SandboxDeps } from "./deps";
import { ACCOUNT_TTL_S, accountKeys, digestOf } from "./sandbox-account-keys";

/**
 * The sandbox accounts' tokens: issued, expired or revoked through the control surface, resolved
 * on every Graph call, and Graph's answers (in Meta's words) for one that no longer works.
 */

export const TOKEN_STATES = ["valid", "expired", "revoked"] as const;
export type TokenState = (typeof TOKEN_STATES)[number];

/** Meta answers expires_in 5183944 for a long-lived token: 60 days, less a little. */
export const LONG_LIVED_S = 5_183_944;

/** Which login issued a token: Instagram Login's work on graph.instagram.com, Facebook Login's on graph.facebook.com. */
export type TokenLogin = "instagram" | "facebook";

export interface TokenGrant {
  /** When it stops working by itself (ms), as Meta's short-lived (1 h) and long-lived (60 days) tokens do. */
  expiresAt?: number;
  kind?: "short" | "long";
  /** When Meta would have issued it (ms): a refresh needs a token at least 24 h old. */
  issuedAt?: number;
  /** Undefined for a token made through the control surface or configured (REEL_ACCOUNTS): no login made it. */
  login?: TokenLogin;
  /** The permissions the person allowed; undefined for a token no dialog made, which may do everything. */
  scopes?: readonly string[];
}

/** A new valid token for the account, which becomes its current one. */
export async function issueToken(deps: SandboxDeps, accountId: string, grant: TokenGrant = {}): Promise<string> {
  const token = `IGSANDBOX${randomBytes(24).toString("base64url")}`;
  const digest = digestOf(token);
  await deps.redis
    .multi()
    .hset(accountKeys.token(digest), {
      account_id: accountId,
      state: "valid",
      kind: grant.kind ?? "long",
      expires_at: grant.expiresAt === undefined ? "" : String(grant.expiresAt),
      issued_at: String(grant.issuedAt ?? deps.now()),
      login: grant.login ?? "",
      // Space-separated: a scope never holds a space, and "" (none allowed) differs from absent.
      ...(grant.scopes ? { scopes: grant.scopes.join(" ") } : {}),
    })
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
  account: { accountId: string },
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

/**
 * A long-lived token that lapses `expiresInS` from now, issued as long ago as a 60-day token that
 * lapses then was: a rehearsal's token near its end, and old enough to refresh.
 */
export function issueLongLivedToken(
  deps: SandboxDeps,
  accountId: string,
  expiresInS: number,
  grant: Pick<TokenGrant, "login" | "scopes"> = {},
): Promise<string> {
  const expiresAt = deps.now() + expiresInS * 1000;
  const issuedAt = Math.min(deps.now(), expiresAt - LONG_LIVED_S * 1000);
  return issueToken(deps, accountId, { ...grant, expiresAt, kind: "long", issuedAt });
}

export interface ResolvedToken {
  accountId: string;
  state: TokenState;
  expiredAt?: number;
  kind: "short" | "long";
  /** When it was issued; undefined for a configured token or one stored before the sandbox kept it. */
  issuedAt?: number;
  login?: TokenLogin;
  /** The permissions allowed; undefined: not limited (no dialog made the token). */
  scopes?: string[];
}

/** The account a token belongs to, whether it still works (and since when it does not), and its kind; undefined for a token the sandbox never issued. */
export async function resolveToken(deps: SandboxDeps, token: string): Promise<ResolvedToken | undefined> {
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
      ...(stored.issued_at ? { issuedAt: Number(stored.issued_at) } : {}),
      ...(stored.login === "instagram" || stored.login === "facebook" ? { login: stored.login } : {}),
      ...(stored.scopes !== undefined ? { scopes: stored.scopes.split(" ").filter(Boolean) } : {}),
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
