import type { AccountView } from "../accounts/account";
import { connectedAccountKeys, type ConnectedAccount } from "../accounts/connected-accounts";
import type { GraphFailureView } from "../graph/failure-view";
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
export async function enqueueAccountNeedsReconnect(
  redis: Redis,
  account: ConnectedAccount,
  error: GraphFailureView,
  at: Date,
): Promise<string[]> {
  // A reel coming due weeks after the refusal waits, and its announcement asks again: the
  // deliveries that would dedupe it are gone by then, so the account's record keeps the version sent.
  const record = connectedAccountKeys.record(account.accountId);
  const sent = Number((await redis.hget(record, NEEDS_RECONNECT_SENT)) ?? 0);
  if (sent >= account.tokenVersion) return [];
  const queued = await enqueueWebhookEvent(redis, {
    tenantId: account.tenantId,
    type: "account.needs_reconnect",
    occurrence: `account:${account.accountId}:needs_reconnect:${account.tokenVersion}`,
    at,
    data: async () => ({ ...dataOf(account), status: "needs_reconnect", error }) satisfies AccountEventData,
  });
  await redis.eval(REMEMBER_SENT, 1, record, NEEDS_RECONNECT_SENT, account.tokenVersion);
  return queued;
}

/** The account record's field holding the highest token version whose account.needs_reconnect was queued (a disconnect deletes it with the record; a reconnect is a new version). */
const NEEDS_RECONNECT_SENT = "needs_reconnect_sent";

// Raises the field to ARGV[2] on a record that still exists (a late, slower path for an older
// version lowers nothing). KEYS: the account's record. ARGV: the field, the version.
const REMEMBER_SENT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if (tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;

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
