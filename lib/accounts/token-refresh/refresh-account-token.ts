import type { Log } from "../../log";
import type { Redis } from "../../redis";
import { GraphPaused } from "../../graph/error";
import { trustedGraphUrl, untrustedGraphHostError } from "../../graph/hosts";
import type { GraphFailureView } from "../../graph/failure-view";
import { errorOf } from "../../graph/failure-view";
import { enqueueAccountExpiring, enqueueAccountNeedsReconnect } from "../../webhooks/account-events";
import type { ConnectedAccount, ConnectedAccounts } from "../connected-accounts";
import { MetaLoginError, refreshLongLivedToken, type LoginClientDeps } from "../meta-login/instagram-login-client";
import { decideTokenRefresh, isExpiringSoon, tokenRefreshDueAt } from "./token-refresh-policy";
import { dropTokenRefresh, scheduleTokenRefresh, tokenRefreshKeys } from "./token-refresh-queue";

export interface TokenRefreshDeps extends LoginClientDeps {
  redis: Redis;
  accounts: ConnectedAccounts;
  /** GRAPH_URL and Instagram Login's Graph host: a token is sent only to one of these (lib/graph/hosts.ts). */
  graphUrl: string;
  instagramGraphUrl: string;
  /** TOKEN_REFRESH_BEFORE_S, in ms. */
  refreshBeforeMs: number;
  /** How soon a refresh that failed for a passing reason is tried again, at the soonest. */
  retryMs: number;
  log: Log;
  now: () => number;
}

/** An owed account.needs_reconnect is kept this long: the schedule looks at the account again minutes after its worker's end; this outlasts workers away for days. */
const NEEDS_RECONNECT_OWED_MS = 7 * 86_400_000;

/** A refresh held back by the pacer until this close to its token's expiry is announced as failing. */
const PAUSED_TOO_LONG_BEFORE_MS = 86_400_000;

export type TokenRefreshOutcome = "refreshed" | "waiting" | "dropped" | "needs_reconnect" | "retrying";

/**
 * Looks at one account of the schedule: refreshes its token when due and stores the new one
 * sealed, or scores it for when it is due. Instagram's 190 (any error GRAPH_ERRORS says only a
 * reconnect cures) marks it needs_reconnect (account.needs_reconnect); any other failure is tried
 * again after `retryMs`, or after the estimated_time_to_regain_access Graph named if longer, and
 * announced once (account.expiring) when the token has less than 7 days left. A refresh the pacer
 * holds back (GraphPaused) comes back when the pause ends; it is announced only once the token has
 * less than a day left at the pause's end (it was not tried, so it has not failed until then).
 */
export async function refreshAccountToken(deps: TokenRefreshDeps, accountId: string): Promise<TokenRefreshOutcome> {
  const now = deps.now();
  const account = await deps.accounts.findById(accountId);
  const decision = decideTokenRefresh(account, deps.refreshBeforeMs, now);
  if (decision.kind === "drop" || !account) {
    if (account) await queueOwedNeedsReconnect(deps, account);
    await dropTokenRefresh(deps.redis, accountId, account?.tokenVersion);
    return "dropped";
  }
  if (decision.kind === "wait") {
    await scheduleTokenRefresh(deps.redis, accountId, decision.until);
    return "waiting";
  }
  const host = trustedGraphUrl(account.graphUrl ?? deps.graphUrl, [deps.graphUrl, deps.instagramGraphUrl]);
  if (host === undefined) return markNeedsReconnect(deps, account, untrustedGraphHostError());
  try {
    const refreshed = await refreshLongLivedToken(deps, host, { accountId, accessToken: decision.accessToken });
    const expiresAt = deps.now() + refreshed.expiresIn * 1000;
    const tokenExpiresAt = new Date(expiresAt).toISOString();
    const stored = await deps.accounts.storeRefreshedToken(
      accountId,
      account.tokenVersion,
      refreshed.accessToken,
      tokenExpiresAt,
    );
    // Not stored: reconnected or marked meanwhile; looked at again at once, with what it has now.
    await scheduleTokenRefresh(
      deps.redis,
      accountId,
      stored ? tokenRefreshDueAt(expiresAt, deps.refreshBeforeMs) : now,
    );
    if (stored)
      deps.log("info", "account token refreshed", { account_id: accountId, token_expires_at: tokenExpiresAt });
    return stored ? "refreshed" : "waiting";
  } catch (error) {
    if (error instanceof GraphPaused) return retryLater(deps, account, decision.expiresAt, error.until, error);
    if (!(error instanceof MetaLoginError)) throw error;
    if (error.graphError?.action === "reconnect-account")
      return markNeedsReconnect(deps, account, errorOf(error.graphError));
    // A rate-limit refusal named its estimated_time_to_regain_access (its usage headers): no try
    // before it. The pacer, told of the refusal, holds the next try until its block ends too.
    const regainAccessMs = error.graphError?.usage?.regainAccessMs ?? 0;
    return retryLater(deps, account, decision.expiresAt, deps.now() + Math.max(deps.retryMs, regainAccessMs), error);
  }
}

async function markNeedsReconnect(
  deps: TokenRefreshDeps,
  account: ConnectedAccount,
  refused: GraphFailureView,
): Promise<TokenRefreshOutcome> {
  deps.log("warn", "account token refresh refused: the account needs reconnecting", {
    account_id: account.accountId,
    error: refused.message,
  });
  // Owed before the mark, paid after the event is queued: a worker or Redis lost in between leaves
  // the account marked and on the schedule, whose next look queues the event (queueOwedNeedsReconnect).
  const owed = tokenRefreshKeys.needsReconnectOwed(account.accountId);
  await deps.redis.set(owed, String(account.tokenVersion), "PX", NEEDS_RECONNECT_OWED_MS);
  if (await deps.accounts.markNeedsReconnect(account.accountId, account.tokenVersion, refused))
    await enqueueAccountNeedsReconnect(deps.redis, account, refused, new Date(deps.now()));
  await deps.redis.del(owed);
  // A reconnect through Instagram Login puts it back on the schedule (and one since the account
  // was read keeps it there).
  await dropTokenRefresh(deps.redis, account.accountId, account.tokenVersion);
  return "needs_reconnect";
}

/**
 * The account.needs_reconnect of a refresh refused for this token version, when its worker did not
 * live to queue it. Only a refused refresh owes one here: a publication's refusal sends its own
 * through the log, the account list's directly. A repeat is one delivery: the event's occurrence
 * is the token version.
 */
async function queueOwedNeedsReconnect(deps: TokenRefreshDeps, account: ConnectedAccount): Promise<void> {
  if (account.status !== "needs_reconnect" || !account.error) return;
  const owed = tokenRefreshKeys.needsReconnectOwed(account.accountId);
  if ((await deps.redis.get(owed)) !== String(account.tokenVersion)) return;
  await enqueueAccountNeedsReconnect(deps.redis, account, account.error, new Date(deps.now()));
  await deps.redis.del(owed);
}

async function retryLater(
  deps: TokenRefreshDeps,
  account: ConnectedAccount,
  expiresAt: number,
  retryAt: number,
  error: MetaLoginError | GraphPaused,
): Promise<TokenRefreshOutcome> {
  const now = deps.now();
  deps.log("warn", "account token not refreshed; tried again later", {
    account_id: account.accountId,
    retry_at: new Date(retryAt).toISOString(),
    error: error.stack,
  });
  // A refresh the pacer held back was not tried: no failure to announce, unless the token has under a day left when the pause ends.
  const failed = !(error instanceof GraphPaused) || error.until >= expiresAt - PAUSED_TOO_LONG_BEFORE_MS;
  if (failed && isExpiringSoon(expiresAt, now)) {
    const sent = tokenRefreshKeys.expiringSent(account.accountId);
    if ((await deps.redis.get(sent)) !== account.tokenExpiresAt) {
      await enqueueAccountExpiring(deps.redis, account, new Date(now));
      // Kept a day past the expiry: by then the token is refused and the account needs reconnecting anyway.
      await deps.redis.set(sent, account.tokenExpiresAt!, "PX", Math.max(1, expiresAt - now) + 86_400_000);
    }
  }
  await scheduleTokenRefresh(deps.redis, account.accountId, retryAt);
  return "retrying";
}
