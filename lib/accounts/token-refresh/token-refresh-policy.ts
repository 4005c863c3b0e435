import { TOKEN_EXPIRING_WITHIN_DAYS } from "../account";
import type { ConnectedAccount } from "../connected-accounts";

/**
 * When a long-lived Instagram-login token is refreshed, as pure decisions. Meta refreshes such a
 * token once it is at least 24 h old and until it expires, 60 days after it was issued; Dispatch
 * does so within `beforeMs` of its expiry. A token's age is read from its expiry (issued 60 days
 * before it), since a token may reach Dispatch already old (the sandbox's rehearsal tokens do).
 */

/** Meta's expires_in for a long-lived token: 60 days, less a little. */
export const LONG_LIVED_LIFETIME_MS = 5_183_944 * 1000;
export const REFRESHABLE_AFTER_MS = 24 * 60 * 60 * 1000;
export const EXPIRING_WITHIN_MS = TOKEN_EXPIRING_WITHIN_DAYS * 24 * 60 * 60 * 1000;

/** drop: nothing to refresh (a pasted token, one without expiry, an account gone or waiting for a reconnect). */
export type TokenRefreshDecision =
  { kind: "drop" } | { kind: "wait"; until: number } | { kind: "refresh"; accessToken: string; expiresAt: number };

/** When a token that expires at `expiresAt` is due: at least 24 h old and within `beforeMs` of its expiry. */
export function tokenRefreshDueAt(expiresAt: number, beforeMs: number): number {
  const issuedAt = expiresAt - LONG_LIVED_LIFETIME_MS;
  return Math.max(issuedAt + REFRESHABLE_AFTER_MS, expiresAt - beforeMs);
}

/** Whether Dispatch refreshes the account's token itself: a long-lived Instagram Login token connected through the API. */
export function isRefreshedByDispatch(account: Pick<ConnectedAccount, "login" | "source" | "tokenExpiresAt">): boolean {
  return (
    account.login === "instagram" &&
    account.source === "api" &&
    Number.isFinite(Date.parse(account.tokenExpiresAt ?? ""))
  );
}

export function decideTokenRefresh(
  account: ConnectedAccount | undefined,
  beforeMs: number,
  now: number,
): TokenRefreshDecision {
  if (!account?.accessToken || account.status !== "connected" || !isRefreshedByDispatch(account))
    return { kind: "drop" };
  const expiresAt = Date.parse(account.tokenExpiresAt ?? "");
  const due = tokenRefreshDueAt(expiresAt, beforeMs);
  // An expired token is sent too: Meta's 190 is what says it must be reconnected.
  return due > now ? { kind: "wait", until: due } : { kind: "refresh", accessToken: account.accessToken, expiresAt };
}

/** A token this close to its expiry, not refreshed, is announced (account.expiring) and shown as to reconnect. */
export function isExpiringSoon(expiresAt: number, now: number): boolean {
  return expiresAt - now <= EXPIRING_WITHIN_MS;
}
