import type { AccountView } from "../accounts/account";
import type { ConnectedAccount } from "../accounts/connected-accounts";
import type { PublicationError } from "../reels/publication";
import type { Redis } from "../redis";
import { enqueueWebhookEvent } from "./enqueue-event";
import { webhookKeys } from "./keys";

/** An account event's `data`: the account as GET /api/accounts shows it, without what Graph is asked for (quota). */
export type AccountEventData = Pick<
  AccountView,
  "account_id" | "label" | "username" | "status" | "error" | "login" | "token_expires_at"
>;

/**
 * account.needs_reconnect: once per token (its version) Graph refused, whichever path saw it first
 * (a refresh, a publication, the account list's read). `error` is why, as the account now shows it.
 */
export async function enqueueAccountNeedsReconnect(
  redis: Redis,
  account: ConnectedAccount,
  error: PublicationError,
  at: Date,
): Promise<string[]> {
  // A reel coming due weeks after the refusal waits, and its announcement asks again: the
  // deliveries that would dedupe it are gone by then, so the version sent is remembered longer.
  const sent = webhookKeys.needsReconnectSent(account.accountId);
  const version = String(account.tokenVersion);
  if ((await redis.get(sent)) === version) return [];
  const queued = await enqueueWebhookEvent(redis, {
    tenantId: account.tenantId,
    type: "account.needs_reconnect",
    occurrence: `account:${account.accountId}:needs_reconnect:${account.tokenVersion}`,
    at,
    data: async () => ({ ...dataOf(account), status: "needs_reconnect", error }) satisfies AccountEventData,
  });
  await redis.set(sent, version, "PX", NEEDS_RECONNECT_SENT_MS);
  return queued;
}

/** How long the version whose account.needs_reconnect was sent is remembered: a refused token is not refused again unless reconnected (a new version). */
const NEEDS_RECONNECT_SENT_MS = 180 * 86_400_000;

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
