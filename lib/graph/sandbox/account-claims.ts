import type { SandboxDeps } from "./deps";
import { ACCOUNT_TTL_S, accountKeys } from "./sandbox-account-keys";
import { findSandboxAccount, type SandboxAccount } from "./sandbox-accounts";

/**
 * Which sandbox accounts a Dispatch tenant may log in as at the sandbox's dialogs: its own
 * REEL_ACCOUNTS entries, the accounts it holds (made for it through the control surface, or
 * claimed by it), and accounts made for no one that no one has claimed yet. A tenant claims an
 * account when its dialog issues a code for it; from then on no other tenant is offered it.
 * Without this a stranger could log in as any tenant's account and publish on it.
 */

/** The accounts the tenant's dialog offers, its own first; at most `limit` of the held and of the unclaimed. */
export async function listAccountsFor(deps: SandboxDeps, tenantId: string, limit = 50): Promise<SandboxAccount[]> {
  const configured = deps.config.REEL_ACCOUNTS.filter((a) => a.tenantId === tenantId).map((a) => a.accountId);
  const [held, unclaimed] = await Promise.all([
    deps.redis.zrevrange(accountKeys.held(tenantId), 0, limit - 1),
    deps.redis.zrevrange(accountKeys.unclaimed, 0, limit - 1),
  ]);
  const ids = [...new Set([...configured, ...held, ...unclaimed])];
  const found = await Promise.all(ids.map((id) => findSandboxAccount(deps, id)));
  return found.filter((a): a is SandboxAccount => a !== undefined && mayHold(a, tenantId));
}

const mayHold = (account: SandboxAccount, tenantId: string) =>
  account.tenantId === undefined || account.tenantId === tenantId;

// All or nothing: every account is unclaimed or already the tenant's, then each becomes the tenant's.
const CLAIM = `
local unclaimed = KEYS[1]
local held = KEYS[2]
local tenant = ARGV[1]
local now = ARGV[2]
local ttl = ARGV[3]
for i = 3, #KEYS do
  if not redis.call('HGET', KEYS[i], 'username') then return 0 end
  local holder = redis.call('HGET', KEYS[i], 'tenant')
  if holder and holder ~= '' and holder ~= tenant then return 0 end
end
for i = 3, #KEYS do
  local accountId = ARGV[i + 1]
  redis.call('HSET', KEYS[i], 'tenant', tenant)
  redis.call('ZREM', unclaimed, accountId)
  redis.call('ZADD', held, now, accountId)
end
redis.call('EXPIRE', held, ttl)
return 1`;

/**
 * Makes the accounts the tenant's, as its dialog issues a code for them; false, and nothing
 * claimed, when any of them is unknown or another tenant's (a REEL_ACCOUNTS entry included).
 */
export async function claimAccounts(
  deps: SandboxDeps,
  tenantId: string,
  accountIds: readonly string[],
): Promise<boolean> {
  const made: string[] = [];
  for (const accountId of new Set(accountIds)) {
    const configured = deps.config.REEL_ACCOUNTS.find((a) => a.accountId === accountId);
    if (configured && configured.tenantId !== tenantId) return false;
    if (!configured) made.push(accountId);
  }
  if (made.length === 0) return true;
  const claimed = await deps.redis.eval(
    CLAIM,
    2 + made.length,
    accountKeys.unclaimed,
    accountKeys.held(tenantId),
    ...made.map((id) => accountKeys.profile(id)),
    tenantId,
    String(deps.now()),
    String(ACCOUNT_TTL_S),
    ...made,
  );
  return claimed === 1;
}
