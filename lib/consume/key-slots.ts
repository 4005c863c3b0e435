import type { RedisCommand } from "../lease";
import type { Redis } from "../redis";
import { redisScript } from "../redis-script";

/** Redis key of a group's running-work slots for one key (a tenant, an account). */
export const slotsKey = (group: string, key: string) => `slots:${group}:${key}`;

/** Slots one ZADD of a renewal carries at most. */
const RENEW_CHUNK = 1000;

// A slot is a member of a sorted set scored by when it lapses (Redis's clock, so workers' clocks
// do not matter). Lapsed slots are dropped first: a dead worker's slots free themselves.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
// KEYS: the slot set of each wanted slot, in the order wanted (a key may come more than once);
// ARGV: the limit, the ttl, then the slots. One script for all of them: once a key is full, its
// later slots in the same call are refused too, so a key's work still starts in its order.
const ACQUIRE = redisScript(`${NOW}
local limit, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local swept, taken = {}, {}
for i, key in ipairs(KEYS) do
  if not swept[key] then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    swept[key] = true
  end
  local slot = ARGV[i + 2]
  if not redis.call('ZSCORE', key, slot) and redis.call('ZCARD', key) >= limit then
    taken[i] = 0
  else
    redis.call('ZADD', key, now + ttl, slot)
    redis.call('PEXPIRE', key, ttl)
    taken[i] = 1
  end
end
return taken`);
// KEYS: the slot sets; ARGV: the ttl, then for each key the number of its slots and the slots.
// One ZADD per key and chunk (unpack's stack bounds a call's arguments), one PEXPIRE per key.
const RENEW = redisScript(`${NOW}
local at = now + tonumber(ARGV[1])
local i = 2
for _, key in ipairs(KEYS) do
  local n = tonumber(ARGV[i])
  for first = 1, n, ${RENEW_CHUNK} do
    local args = {}
    for j = first, math.min(n, first + ${RENEW_CHUNK - 1}) do
      args[#args + 1] = at
      args[#args + 1] = ARGV[i + j]
    end
    redis.call('ZADD', key, 'XX', unpack(args))
  end
  redis.call('PEXPIRE', key, ARGV[1])
  i = i + n + 1
end
return 1`);
const COUNT = redisScript(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`);

/**
 * A cap on running work per key across the whole cluster (TENANT_CONCURRENCY): a worker takes a
 * slot before it starts a message of that key and gives it back when the message settles. Slots
 * are leases: each worker renews its own every second (the runner's tick), and a dead worker's lapse
 * `ttlMs` after its last renewal.
 */
export class KeySlots {
  private readonly held = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly group: string,
    private readonly limit: number,
    private readonly ttlMs = 10_000,
  ) {}

  /**
   * Takes a slot of `key` for `slot` (a run id); false when the key has `limit` running already.
   * With no limit (Infinity) there is nothing to count: no slot is written, none is released.
   */
  async acquire(key: string, slot: string): Promise<boolean> {
    const [taken] = await this.acquireAll([{ key, slot }]);
    return taken;
  }

  /**
   * acquire for several slots in one round trip, in order: whether each was taken. A key that is
   * full refuses its later slots of the call too, so they keep their order for the next try.
   */
  async acquireAll(wanted: { key: string; slot: string }[]): Promise<boolean[]> {
    if (this.limit === Infinity || wanted.length === 0) return wanted.map(() => true);
    const taken = (await ACQUIRE.run(
      this.redis,
      wanted.map(({ key }) => slotsKey(this.group, key)),
      [this.limit, this.ttlMs, ...wanted.map(({ slot }) => slot)],
    )) as number[];
    return wanted.map(({ key, slot }, i) => {
      if (taken[i] === 1) this.held.set(slot, key);
      return taken[i] === 1;
    });
  }

  async release(slot: string): Promise<void> {
    const key = this.held.get(slot);
    if (key === undefined) return;
    this.held.delete(slot);
    await this.redis.zrem(slotsKey(this.group, key), slot);
  }

  /**
   * The command that gives `slot` back, for the work's own last write to run in the same round
   * trip; from then on this process neither renews nor releases the slot (a write that fails
   * leaves it to lapse within `ttlMs`). None when the slot is not held.
   */
  handOver(slot: string): RedisCommand[] {
    const key = this.held.get(slot);
    if (key === undefined) return [];
    this.held.delete(slot);
    return [["ZREM", slotsKey(this.group, key), slot]];
  }

  /**
   * Renews every slot this process holds, in one round trip and with two commands per key (the
   * slots of one tenant in one ZADD), not two per slot: a worker running hundreds of jobs renews
   * them every second.
   */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const byKey = new Map<string, string[]>();
    for (const [slot, key] of this.held) {
      const slots = byKey.get(key);
      if (slots) slots.push(slot);
      else byKey.set(key, [slot]);
    }
    await RENEW.run(
      this.redis,
      [...byKey.keys()].map((key) => slotsKey(this.group, key)),
      [this.ttlMs, ...[...byKey.values()].flatMap((slots) => [slots.length, ...slots])],
    );
  }

  /** Running work of `key` across the cluster. */
  async count(key: string): Promise<number> {
    return Number(await COUNT.run(this.redis, [slotsKey(this.group, key)], []));
  }
}
