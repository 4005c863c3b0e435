/**
 * A tenant's index of its jobs or publications (a sorted set scored by creation time, for
 * listing), kept bounded: every add also drops entries past the age at which their records have
 * certainly expired, keeps at most `maxEntries` (the newest), and renews the key's own expiry, so
 * a busy tenant's index stops growing and an idle tenant's goes away.
 */
export interface IndexBound {
  /** Entries created longer ago than this point at expired records. */
  maxAgeMs: number;
  maxEntries: number;
}

/**
 * The add and its trimming, as a Lua function for a script that adds an item (the reveal,
 * lib/accept): `addToTenantIndex(key, member, score, ...tenantIndexArgs(bound, nowMs))`.
 */
export const ADD_TO_TENANT_INDEX_LUA = `
local function addToTenantIndex(key, member, score, cutoff, maxEntries, maxAgeMs)
  redis.call('ZADD', key, score, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. cutoff)
  redis.call('ZREMRANGEBYRANK', key, 0, -(tonumber(maxEntries) + 1))
  redis.call('PEXPIRE', key, maxAgeMs)
end`;

/** The arguments ADD_TO_TENANT_INDEX_LUA's function takes after the key, the member and its score. */
export function tenantIndexArgs(bound: IndexBound, nowMs: number): [number, number, number] {
  return [nowMs - bound.maxAgeMs, bound.maxEntries, bound.maxAgeMs];
}
