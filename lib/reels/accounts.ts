import type { ReelAccount } from "../config";
import type { Redis } from "../redis";
import type { GraphClient } from "./graph-client";

/** What a client may know of an account: its id, its Instagram username, whether it publishes to the sandbox. Never its token. */
export interface AccountView {
  account_id: string;
  /** From Graph, cached a few minutes; null when Graph could not tell. */
  username: string | null;
  sandbox: boolean;
}

/** Long enough that a dashboard's lists do not each ask Graph; short enough that a renamed account shows soon. */
export const USERNAME_TTL_S = 300;
/** Graph is asked while a client waits for the list: a slow Graph costs it at most this long. */
const USERNAME_TIMEOUT_MS = 3000;

export const accountKeys = {
  username: (accountId: string) => `reel:account:${accountId}:username`,
};

export async function listAccounts(
  deps: { redis: Redis; graph: GraphClient },
  accounts: ReelAccount[],
  tenantId: string,
  options: { sandbox: boolean; signal?: AbortSignal },
): Promise<AccountView[]> {
  const mine = accounts.filter((a) => a.tenantId === tenantId);
  const usernames = await Promise.all(mine.map((account) => readUsername(deps, account, options.signal)));
  return mine.map((a, i) => ({ account_id: a.accountId, username: usernames[i] ?? null, sandbox: options.sandbox }));
}

/**
 * The account's username from Graph (`GET /{account_id}?fields=id,username` with its own token),
 * cached in Redis. Never fails: an unreachable Graph (or Redis) is a null username, not a failed list.
 */
async function readUsername(deps: { redis: Redis; graph: GraphClient }, account: ReelAccount, signal?: AbortSignal): Promise<string | null> {
  const key = accountKeys.username(account.accountId);
  const cached = await deps.redis.get(key).catch(() => null);
  if (cached) return cached;
  const timeout = AbortSignal.timeout(USERNAME_TIMEOUT_MS);
  try {
    const { username } = await deps.graph.readAccount(account, "id,username", signal ? AbortSignal.any([signal, timeout]) : timeout);
    if (typeof username !== "string" || !username) return null;
    await deps.redis.set(key, username, "EX", USERNAME_TTL_S).catch(() => {});
    return username;
  } catch {
    return null;
  }
}

/** The tenant's account with that id; another tenant's account is as unknown as a missing one. */
export function findAccount(accounts: ReelAccount[], tenantId: string, accountId: string): ReelAccount | undefined {
  return accounts.find((a) => a.accountId === accountId && a.tenantId === tenantId);
}
