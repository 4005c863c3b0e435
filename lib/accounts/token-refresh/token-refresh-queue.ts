import type { Redis } from "../../redis";
import type { TokenRefresh } from "../account";
import { connectedAccountKeys, type ConnectedAccount, type ConnectedAccounts } from "../connected-accounts";
import { isRefreshedByDispatch } from "./token-refresh-policy";

/**
 * The token-refresh schedule in Redis: a sorted set of account ids scored by when each is next
 * looked at (ms). A connection through Instagram Login adds its account due at once; the
 * scheduler then decides when its token is really due and scores it so. A claim moves an entry
 * `claimMs` ahead, so two schedulers never work on one account at once, and an account whose
 * scheduler died comes due again when its claim runs out.
 */

export const tokenRefreshKeys = {
  due: "accounts:token-refresh:due",
  /** The lease of the one scheduler working the schedule, cluster-wide. */
  lease: "accounts:token-refresh:lease",
  /** Set once account.expiring was sent for the account's token (its value: that token's expiry). */
  expiringSent: (accountId: string) => `accounts:token-refresh:expiring-sent:${accountId}`,
  /** Set (its value: the refused token's version) from a refused refresh until its account.needs_reconnect is queued. */
  needsReconnectOwed: (accountId: string) => `accounts:token-refresh:needs-reconnect-owed:${accountId}`,
};

/**
 * What the account's view says of its token's refresh (AccountView.token_refresh): `failing` once
 * account.expiring was sent for this token; `none` too for an account that needs reconnecting (its
 * token was refused: nothing is refreshed until it is connected again).
 */
export async function readTokenRefresh(
  redis: Redis,
  account: Pick<ConnectedAccount, "accountId" | "login" | "source" | "tokenExpiresAt" | "status">,
): Promise<TokenRefresh> {
  if (account.status !== "connected" || !isRefreshedByDispatch(account)) return "none";
  const expiringSent = await redis.get(tokenRefreshKeys.expiringSent(account.accountId)).catch(() => null);
  return expiringSent === account.tokenExpiresAt ? "failing" : "automatic";
}

export async function scheduleTokenRefresh(redis: Redis, accountId: string, at: number): Promise<void> {
  await redis.zadd(tokenRefreshKeys.due, at, accountId);
}

// Takes the account off the schedule only while its record holds the token version the caller
// looked at ('' : no record). KEYS: the account's record, the schedule. ARGV: account id, version.
const DROP_UNLESS_RECONNECTED = `
if (redis.call('HGET', KEYS[1], 'token_version') or '') ~= ARGV[2] then return 0 end
return redis.call('ZREM', KEYS[2], ARGV[1])`;

/**
 * Takes the account off the schedule, unless it was connected again since the caller read it
 * (`tokenVersion`; undefined: it had no record then): a reconnect through Instagram Login puts it
 * on the schedule, and a refresh that ends after that must not take the new token off it.
 */
export async function dropTokenRefresh(
  redis: Redis,
  accountId: string,
  tokenVersion: number | undefined,
): Promise<void> {
  await redis.eval(
    DROP_UNLESS_RECONNECTED,
    2,
    connectedAccountKeys.record(accountId),
    tokenRefreshKeys.due,
    accountId,
    tokenVersion === undefined ? "" : String(tokenVersion),
  );
}

// Takes up to ARGV[2] entries due by ARGV[1], each pushed to ARGV[3] while it is worked on.
const CLAIM = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[3], id) end
return due`;

/** The accounts due by `now`, at most `limit`, claimed for `claimMs`. */
export async function claimDueTokenRefreshes(
  redis: Redis,
  now: number,
  limit: number,
  claimMs: number,
): Promise<string[]> {
  return (await redis.eval(CLAIM, 1, tokenRefreshKeys.due, now, limit, now + claimMs)) as string[];
}

/**
 * Puts the tenants' Instagram-login accounts on the schedule, due at once, unless they are on it
 * already: accounts connected before the schedule existed, or whose entry was lost. Run at a
 * worker's start.
 */
export async function enrollInstagramAccounts(
  redis: Redis,
  accounts: ConnectedAccounts,
  tenantIds: readonly string[],
  now: number,
): Promise<number> {
  let enrolled = 0;
  for (const tenantId of new Set(tenantIds)) {
    for (const account of await accounts.list(tenantId)) {
      if (account.login !== "instagram" || account.status !== "connected") continue;
      enrolled += Number(await redis.zadd(tokenRefreshKeys.due, "NX", now, account.accountId));
    }
  }
  return enrolled;
}
