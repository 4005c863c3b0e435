import type { Log } from "../../log";
import type { Redis } from "../../redis";
import { trustedGraphUrl, untrustedGraphHostError } from "../../reels/graph-hosts";
import type { PublicationError } from "../../reels/publication";
import { errorOf } from "../../reels/publication-error";
import { enqueueAccountExpiring, enqueueAccountNeedsReconnect } from "../../webhooks/account-events";
import type { ConnectedAccount, ConnectedAccounts } from "../connected-accounts";
import { MetaLoginError, refreshLongLivedToken, type LoginClientDeps } from "../meta-login/instagram-login-client";
import { decideTokenRefresh, isExpiringSoon, tokenRefreshDueAt } from "./token-refresh-policy";
import { dropTokenRefresh, scheduleTokenRefresh, tokenRefreshKeys } from "./token-refresh-queue";

export interface TokenRefreshDeps extends LoginClientDeps {
  redis: Redis;
  accounts: ConnectedAccounts;
  /** GRAPH_URL and Instagram Login's Graph host: a token is sent only to one of these (graph-hosts.ts). */
  graphUrl: string;
  instagramGraphUrl: string;
  /** TOKEN_REFRESH_BEFORE_S, in ms. */
  refreshBeforeMs: number;
  /** How soon a refresh that failed for a passing reason is tried again. */
  retryMs: number;
  log: Log;
  now: () => number;
}

export type TokenRefreshOutcome = "refreshed" | "waiting" | "dropped" | "needs_reconnect" | "retrying";

/**
 * Looks at one account of the schedule: refreshes its token when due and stores the new one
 * sealed, or scores it for when it is due. Instagram's 190 (any error GRAPH_ERRORS says only a
 * reconnect cures) marks it needs_reconnect (account.needs_reconnect); any other failure is tried
 * again after `retryMs`, and announced once (account.expiring) when the token has less than 7 days left.
 */
export async function refreshAccountToken(deps: TokenRefreshDeps, accountId: string): Promise<TokenRefreshOutcome> {
  const now = deps.now();
  const account = await deps.accounts.findById(accountId);
  const decision = decideTokenRefresh(account, deps.refreshBeforeMs, now);
  if (decision.kind === "drop" || !account) {
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
    const refreshed = await refreshLongLivedToken(deps, host, decision.accessToken);
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
    if (!(error instanceof MetaLoginError)) throw error;
    if (error.graphError?.action === "reconnect-account")
      return markNeedsReconnect(deps, account, errorOf(error.graphError));
    return retryLater(deps, account, decision.expiresAt, error);
  }
}

async function markNeedsReconnect(
  deps: TokenRefreshDeps,
  account: ConnectedAccount,
  refused: PublicationError,
): Promise<TokenRefreshOutcome> {
  deps.log("warn", "account token refresh refused: the account needs reconnecting", {
    account_id: account.accountId,
    error: refused.message,
  });
  if (await deps.accounts.markNeedsReconnect(account.accountId, account.tokenVersion, refused))
    await enqueueAccountNeedsReconnect(deps.redis, account, refused, new Date(deps.now()));
  // A reconnect through Instagram Login puts it back on the schedule (and one since the account
  // was read keeps it there).
  await dropTokenRefresh(deps.redis, account.accountId, account.tokenVersion);
  return "needs_reconnect";
}

async function retryLater(
  deps: TokenRefreshDeps,
  account: ConnectedAccount,
  expiresAt: number,
  error: MetaLoginError,
): Promise<TokenRefreshOutcome> {
  const now = deps.now();
  deps.log("warn", "account token refresh failed; tried again later", {
    account_id: account.accountId,
    error: error.stack,
  });
  if (isExpiringSoon(expiresAt, now)) {
    const sent = tokenRefreshKeys.expiringSent(account.accountId);
    if ((await deps.redis.get(sent)) !== account.tokenExpiresAt) {
      await enqueueAccountExpiring(deps.redis, account, new Date(now));
      // Kept a day past the expiry: by then the token is refused and the account needs reconnecting anyway.
      await deps.redis.set(sent, account.tokenExpiresAt!, "PX", Math.max(1, expiresAt - now) + 86_400_000);
    }
  }
  await scheduleTokenRefresh(deps.redis, account.accountId, now + deps.retryMs);
  return "retrying";
}
