import type { ChainableCommander } from "ioredis";
import type { RedisCommand } from "./lease";
import { execPipeline, type Redis } from "./redis";
import type { IndexBound } from "./tenant-index";

/**
 * A tenant's items in one status (jobs or publications), beside its tenant index: a sorted set
 * per status, `{tenant index}:status:{STATUS}` (a tenant id has no colon, so no tenant's key is
 * another's), scored like the tenant index by creation time, so `?status=` pages with the same
 * (score, id) cursor and the same guarantee (lib/paging.ts): an item in that status from the
 * first page to the last is listed exactly once, whatever else changes meanwhile.
 *
 * An item enters the index of its status when it is revealed (accept-work.ts: before that no
 * list shows it) and moves with every status write, in the same MULTI or script as the write.
 * A status write before the reveal moves nothing (the item is not in the tenant index yet): the
 * reveal reads the status the record holds by then.
 */
export interface StatusIndexing {
  /** The tenant index's key: its prefix followed by the tenant id (tenant:jobs:{tenant}). */
  tenantIndex: (tenantId: string) => string;
  statuses: readonly string[];
  indexBound: IndexBound;
}

export function statusIndexKey(tenantIndexKey: string, status: string): string {
  return `${tenantIndexKey}:status:${status}`;
}

// The move, as a Lua function a status-writing script can call after its write (start-attempt.ts
// does). `record`: the record's key (a hash with tenant_id and status); `prefix`: the tenant
// index's prefix; `statuses`: space-separated; `ttl`: the index's lifetime (ms). The item leaves
// every other status's index and enters its own at its score in the tenant index; an item not
// there (not revealed, or trimmed) is left out. Entries of expired records go when a list meets
// them, as in the tenant index.
export const SYNC_STATUS_INDEX_LUA = `
local function syncStatusIndex(record, id, prefix, statuses, ttl)
  local tenant = redis.call('HGET', record, 'tenant_id')
  local status = redis.call('HGET', record, 'status')
  if not tenant or not status then return 0 end
  local tenantIndex = prefix .. tenant
  local score = redis.call('ZSCORE', tenantIndex, id)
  if not score then return 0 end
  for other in string.gmatch(statuses, '%S+') do
    if other ~= status then redis.call('ZREM', tenantIndex .. ':status:' .. other, id) end
  end
  local key = tenantIndex .. ':status:' .. status
  redis.call('ZADD', key, score, id)
  redis.call('PEXPIRE', key, ttl)
  return 1
end`;

// KEYS[1]: the record. ARGV: the id, the tenant index's prefix, the statuses, the lifetime (ms).
const SYNC_STATUS_INDEX = `${SYNC_STATUS_INDEX_LUA}
return syncStatusIndex(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])`;

/** The arguments SYNC_STATUS_INDEX_LUA's function takes after the record's key and the id. */
export function statusIndexArgs(indexing: StatusIndexing): [string, string, number] {
  return [indexing.tenantIndex(""), indexing.statuses.join(" "), indexing.indexBound.maxAgeMs];
}

/**
 * Queues, on the MULTI that writes a status, after that write: the item's move to the index of
 * the status its record holds then. Nothing runs between the two.
 */
export function syncStatusIndex(
  chain: ChainableCommander,
  indexing: StatusIndexing,
  recordKey: string,
  id: string,
): ChainableCommander {
  return chain.eval(SYNC_STATUS_INDEX, 1, recordKey, id, ...statusIndexArgs(indexing));
}

/**
 * The move as plain commands, for a write whose caller knows the item's tenant, its creation time
 * (its score) and that it is revealed: a job's final write, run under its lease (writeIfLeaseHeld).
 */
export function statusIndexCommands(
  indexing: StatusIndexing,
  item: { tenantId: string; id: string; createdAtMs: number; status: string },
): RedisCommand[] {
  const tenantIndex = indexing.tenantIndex(item.tenantId);
  const key = statusIndexKey(tenantIndex, item.status);
  const others = indexing.statuses.filter((s) => s !== item.status);
  return [
    ...others.map((s): RedisCommand => ["ZREM", statusIndexKey(tenantIndex, s), item.id]),
    ["ZADD", key, item.createdAtMs, item.id],
    ["PEXPIRE", key, indexing.indexBound.maxAgeMs],
  ];
}

/** Forgets items whose records are gone (a list met them), in the tenant index and every status index. */
export async function forgetIndexed(
  redis: Redis,
  indexing: StatusIndexing,
  tenantId: string,
  ids: string[],
): Promise<void> {
  if (ids.length === 0) return;
  const tenantIndex = indexing.tenantIndex(tenantId);
  const pipeline = redis.pipeline().zrem(tenantIndex, ...ids);
  for (const status of indexing.statuses) pipeline.zrem(statusIndexKey(tenantIndex, status), ...ids);
  await execPipeline(pipeline);
}

/** The index a list pages through: the tenant's, or with `status` that status's. */
export function listedIndex(indexing: StatusIndexing, tenantId: string, status?: string): string {
  const tenantIndex = indexing.tenantIndex(tenantId);
  return status ? statusIndexKey(tenantIndex, status) : tenantIndex;
}
