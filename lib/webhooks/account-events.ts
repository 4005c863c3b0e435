import type { AccountView } from "../accounts/account";
import type { ConnectedAccount } from "../accounts/connected-accounts";
import type { PublicationError } from "../reels/publication";
import type { Redis } from "../redis";
import { enqueueWebhookEvent } from "./enqueue-event";

/** An account event's `data`: the account as GET /api/accounts shows it, without what Graph is asked for (quota). */
export type AccountEventData = Pick<
  AccountView,
  "account_id" | "label" | "username" | "status" | "error" | "login" | "token_expires_at"
>;

/**
 * account.needs_reconnect: once per token (its version) Graph refused, whichever path saw it first
 * (a refresh, a publication, the account list's read). `error` is why, as the account now shows it.
 */
export function enqueueAccountNeedsReconnect(
  redis: Redis,
  account: ConnectedAccount,
  error: PublicationError,
  at: Date,
): Promise<string[]> {
  return enqueueWebhookEvent(redis, {
    tenantId: account.tenantId,
    type: "account.needs_reconnect",
    occurrence: `account:${account.accountId}:needs_reconnect:${account.tokenVersion}`,
    at,
    data: async () => ({ ...dataOf(account), status: "needs_reconnect", error }) satisfies AccountEventData,
  });
}

/** account.expiring: once per token (its expiry) that could not be refreshed within 7 days of its end. */
export function enqueueAccountExpiring(redis: Redis, account: ConnectedAccount, at: Date): Promise<string[]> {
  return enqueueWebhookEvent(redis, {
    tenantId: account.tenantId,
    type: "account.expiring",
    occurrence: `account:${account.accountId}:expiring:${account.tokenExpiresAt}`,
    at,
    data: async () => dataOf(account),
  });
}

function dataOf(account: ConnectedAccount): AccountEventData {
  return {
    account_id: account.accountId,
    label: account.label,
    username: account.username,
    status: account.status,
    login: account.login,
    token_expires_at: account.tokenExpiresAt,
  };
}
