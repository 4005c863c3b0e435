import type { ChainableCommander } from "ioredis";

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

/** Queues the add and its trimming on a MULTI or pipeline. */
export function addToTenantIndex(
  chain: ChainableCommander,
  key: string,
  member: string,
  createdAtMs: number,
  bound: IndexBound,
  nowMs = Date.now(),
): ChainableCommander {
  return chain
    .zadd(key, createdAtMs, member)
    .zremrangebyscore(key, "-inf", `(${nowMs - bound.maxAgeMs}`)
    .zremrangebyrank(key, 0, -(bound.maxEntries + 1))
    .pexpire(key, bound.maxAgeMs);
}
