import type { AccountQuota, AccountView } from "./account";
import { cacheQuota, cachedQuota } from "./account-quota";
import { connectedAccountKeys, type ConnectedAccount, type ConnectedAccounts } from "./connected-accounts";
import type { Redis } from "../redis";
import { GraphError } from "../graph/error";
import { untrustedGraphHostError, type GraphHosts } from "../graph/hosts";
import { readPace } from "../graph/pacing";
import type { GraphFailureView } from "../graph/failure-view";
import { errorOf } from "../graph/failure-view";
import { enqueueAccountNeedsReconnect } from "../webhooks/account-events";
import { readTokenRefresh } from "./token-refresh/token-refresh-queue";

export interface AccountDeps {
  redis: Redis;
  accounts: ConnectedAccounts;
  /** Graph per host: a pasted token is checked at GRAPH_URL, a stored account read at its own host. */
  graphs: GraphHosts;
  /** Whether GRAPH_URL is the built-in sandbox. */
  sandbox: boolean;
  now?: () => number;
}

/** Graph is asked while a client waits for the list: a slow Graph costs it at most this long. */
const GRAPH_TIMEOUT_MS = 3000;
const UNKNOWN_QUOTA: AccountQuota = { quota_usage: null, quota_total: null, quota_duration: null };

/** The tenant's accounts as clients see them, with username and quota. */
export async function listAccountViews(
  deps: AccountDeps,
  tenantId: string,
  signal?: AbortSignal,
): Promise<AccountView[]> {
  const accounts = await deps.accounts.list(tenantId);
  return Promise.all(accounts.map((account) => readAccountView(deps, account, signal)));
}

/**
 * One account's view. The quota comes from the cache or Graph; the username from the record,
 * read from Graph again when older than USERNAME_TTL_S (an account can be renamed). Never fails on Graph: what it cannot tell is null,
 * but a token Graph refuses marks the account needs_reconnect, as the publish flow would.
 */
export async function readAccountView(
  deps: AccountDeps,
  account: ConnectedAccount,
  signal?: AbortSignal,
): Promise<AccountView> {
  let { status, error, username } = account;
  let quota = (await cachedQuota(deps.redis, account.accountId).catch(() => undefined)) ?? UNKNOWN_QUOTA;
  const usernameFresh =
    !!username && (await deps.redis.exists(connectedAccountKeys.usernameRead(account.accountId)).catch(() => 0)) === 1;
  if (status === "connected" && account.accessToken && (quota === UNKNOWN_QUOTA || !usernameFresh)) {
    const graphAccount = { accountId: account.accountId, accessToken: account.accessToken };
    const graph = deps.graphs.forAccount(account);
    const timeout = AbortSignal.timeout(GRAPH_TIMEOUT_MS);
    const within = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      if (!graph) {
        // Its stored host is not a configured one: its token goes nowhere, and it must be connected again.
        const refused = untrustedGraphHostError();
        if (await markRefused(deps, account, refused)) {
          status = "needs_reconnect";
          error = refused;
        }
      } else if (!usernameFresh) {
        username = (await graph.readAccount(graphAccount, "id,username", within)).username ?? username;
        if (username) await deps.accounts.rememberUsername(account.accountId, username);
      }
      if (graph && quota === UNKNOWN_QUOTA) {
        const limit = await graph.readPublishingLimit(graphAccount, within);
        await cacheQuota(deps.redis, account.accountId, limit);
        quota = limit;
      }
    } catch (failure) {
      if (failure instanceof GraphError && failure.action === "reconnect-account") {
        const refused = errorOf(failure);
        if (await markRefused(deps, account, refused)) {
          status = "needs_reconnect";
          error = refused;
        }
      }
    }
  }
  return {
    account_id: account.accountId,
    label: account.label,
    username,
    status,
    ...(status === "needs_reconnect" && error ? { error } : {}),
    quota: { quota_usage: quota.quota_usage, quota_total: quota.quota_total, quota_duration: quota.quota_duration },
    rate_limited_until: await rateLimitedUntil(deps, account.accountId),
    sandbox: deps.sandbox,
    connected_at: account.connectedAt,
    login: account.login,
    token_expires_at: account.tokenExpiresAt,
    // As this read left it: a refusal it saw just now makes the account needs_reconnect.
    token_refresh: await readTokenRefresh(deps.redis, { ...account, status }),
  };
}

/** Marks the account needs_reconnect for this token and, if this call marked it, sends account.needs_reconnect. */
async function markRefused(deps: AccountDeps, account: ConnectedAccount, refused: GraphFailureView): Promise<boolean> {
  if (!(await deps.accounts.markNeedsReconnect(account.accountId, account.tokenVersion, refused))) return false;
  await enqueueAccountNeedsReconnect(deps.redis, account, refused, new Date());
  return true;
}

/** When the pacer lets the account's calls out again (lib/graph/pacing.ts); null when it does not hold them. */
async function rateLimitedUntil(deps: AccountDeps, accountId: string): Promise<string | null> {
  const pace = await readPace(deps.redis, accountId, Date.now()).catch(() => undefined);
  return pace?.pausedUntil ? new Date(pace.pausedUntil).toISOString() : null;
}
