import type { Redis } from "./redis";

// Takes the lease, or says who holds it.
const TAKE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * A worker's claim on a job or publication while it runs it, so a redelivery after a rebalance
 * waits for the holder instead of running the work twice. It lapses `ms` after its holder dies.
 * Returns "" when `owner` holds it now, else the current holder.
 */
export async function takeLease(redis: Redis, key: string, owner: string, ms: number): Promise<string> {
  return (await redis.eval(TAKE, 1, key, owner, ms)) as string;
}

/**
 * Renews a taken lease every third of its life, calling `heartbeat` (the consumer group's) each
 * time and `onLost` if another worker has it now. `release` stops renewing and gives it up.
 */
export function keepLease(redis: Redis, key: string, owner: string, ms: number, hooks: { heartbeat: () => Promise<void>; onLost: () => void }) {
  const timer = setInterval(() => {
    hooks.heartbeat().catch(() => {});
    redis
      .eval(RENEW, 1, key, owner, ms)
      .then((renewed) => {
        if (!renewed) hooks.onLost();
      })
      .catch(() => {});
  }, Math.max(50, Math.floor(ms / 3)));
  return {
    async release(): Promise<void> {
      clearInterval(timer);
      await redis.eval(RELEASE, 1, key, owner).catch(() => {});
    },
  };
}
