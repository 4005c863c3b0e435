import type { GraphFailureView } from "../graph/failure-view";

/**
 * A connected account as clients see it: the view GET /api/accounts answers with. Types and
 * constants only, so the dashboard imports it and keeps no copy. Never a token.
 */

export const ACCOUNT_STATUSES = ["connected", "needs_reconnect"] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** From Graph's content_publishing_limit, cached briefly; nulls when Graph could not tell. */
export interface AccountQuota {
  quota_usage: number | null;
  quota_total: number | null;
  /** Seconds: the moving window the limit counts over (Graph: 86400). */
  quota_duration: number | null;
}

export interface AccountView {
  account_id: string;
  label: string | null;
  /** From Graph, cached a few minutes; null when Graph could not tell. */
  username: string | null;
  status: AccountStatus;
  /** Why the account needs reconnecting: the Graph error that said so. */
  error?: GraphFailureView;
  quota: AccountQuota;
  /**
   * While Graph's usage headers (or a rate-limit refusal) hold the account's calls back (its own
   * budget or the app's): when they may go out again; null when they are not held.
   */
  rate_limited_until: string | null;
  /** Whether it publishes to the built-in sandbox. */
  sandbox: boolean;
  connected_at: string;
  /** How it was connected: `instagram` (Instagram Login), `facebook` (Facebook Login for Business: a Page token) or `token` (a pasted token, or REEL_ACCOUNTS). */
  login: "token" | "instagram" | "facebook";
  /** When its token stops working unless refreshed; null when it does not expire or Dispatch was not told. */
  token_expires_at: string | null;
  /**
   * Whether Dispatch keeps the token alive: `automatic` (an Instagram Login token, refreshed before
   * its expiry), `failing` (such a token within TOKEN_EXPIRING_WITHIN_DAYS of its expiry whose
   * refreshes failed: account.expiring was sent), `none` (a pasted token, REEL_ACCOUNTS, a Page token,
   * or any token while the account needs reconnecting).
   */
  token_refresh: TokenRefresh;
}

export const TOKEN_REFRESHES = ["automatic", "failing", "none"] as const;
export type TokenRefresh = (typeof TOKEN_REFRESHES)[number];

/** A token this close to its expiry that Dispatch could not refresh: the account says to reconnect it (account.expiring). */
export const TOKEN_EXPIRING_WITHIN_DAYS = 7;
