import type { Redis } from "./redis";
import { redisScript } from "./redis-script";
import { abortableSleep } from "./sleep";

// Takes the lease, or says who holds it.
const TAKE = redisScript(`
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''`);
const RENEW = redisScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`,
);
const RELEASE = redisScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
);
/**
 * Lua: `leaseAllows(key, owner)`, whether `owner` may write under the lease at `key`: it holds it, or
 * nobody does (a lapsed lease nobody took is still ours to finish). For scripts that write under a lease.
 */
export const LEASE_ALLOWS_LUA = `
local function leaseAllows(key, owner)
  local holder = redis.call('GET', key)
  return not holder or holder == owner
end`;
const WRITE_IF_HELD = redisScript(`${LEASE_ALLOWS_LUA}
if not leaseAllows(KEYS[1], ARGV[1]) then return 0 end
for _, command in ipairs(cjson.decode(ARGV[2])) do redis.call(unpack(command)) end
return 1`);

/**
 * A run's claim on a job or publication while it works on it, so a redelivery (after a rebalance,
 * or a second message of the same work) waits for the holder instead of running the work twice. It
 * lapses `ms` after its holder dies. The owner names one run, not one worker, so even two deliveries
 * inside one process cannot both hold it. Returns "" when `owner` holds it now, else the holder.
 */
export async function takeLease(redis: Redis, key: string, owner: string, ms: number): Promise<string> {
  return (await TAKE.run(redis, [key], [owner, ms])) as string;
}

/**
 * Renews a taken lease every third of its life, calling `heartbeat` (the consumer group's) each
 * time and `onLost` if another run has it now. `release` stops renewing and gives it up.
 */
export function keepLease(
  redis: Redis,
  key: string,
  owner: string,
  ms: number,
  hooks: { heartbeat: () => Promise<void>; onLost: () => void },
) {
  const timer = setInterval(
    () => {
      // A missed heartbeat is sent again with the next renewal; the group's session outlives several.
      hooks.heartbeat().catch(() => {});
      RENEW.run(redis, [key], [owner, ms])
        .then((renewed) => {
          if (!renewed) hooks.onLost();
        })
        // A renewal lost to Redis is tried again at the next tick; the lease outlives two missed ones.
        .catch(() => {});
    },
    Math.max(50, Math.floor(ms / 3)),
  );
  return {
    async release(): Promise<void> {
      clearInterval(timer);
      await releaseLease(redis, key, owner);
    },
  };
}

/** Gives up a lease `owner` holds (one another run took meanwhile stays theirs). Never throws. */
export async function releaseLease(redis: Redis, key: string, owner: string): Promise<void> {
  // A lease not given up lapses by itself when its time runs out.
  await RELEASE.run(redis, [key], [owner]).catch(() => {});
}

/** A Redis command as its words, e.g. ["HSET", key, field, value]. */
export type RedisCommand = [string, ...(string | number)[]];

/**
 * Runs `commands` atomically if `owner` still holds the lease (or nobody does); false when another
 * run took it, and nothing was written. The final write of a run goes through here, so a run whose
 * lease lapsed (a long GC pause, Redis away) cannot overwrite the work of the run that took over.
 */
export async function writeIfLeaseHeld(
  redis: Redis,
  key: string,
  owner: string,
  commands: RedisCommand[],
): Promise<boolean> {
  const words = commands.map((command) => command.map(String));
  return (await WRITE_IF_HELD.run(redis, [key], [owner, JSON.stringify(words)])) === 1;
}

/** Why a run stopped half-way: the worker is stopping, or its lease was lost. The work is handed back, not settled. */
export class HandBack extends Error {}

export interface LeaseRun {
  redis: Redis;
  key: string;
  /** Names this run (see ParallelControl.runId). */
  owner: string;
  ms: number;
  heartbeat: () => Promise<void>;
  /** Aborts when the worker stops. */
  shutdown: AbortSignal;
}

/**
 * The protocol both durable jobs follow: `check` the record (a result there ends the run without
 * the lease: already final, unknown, not due); take the lease, or wait while another run holds it
 * and check again; then `run` under the lease with a signal that aborts with a HandBack when the
 * worker stops or the lease is lost. A HandBack anywhere becomes `handedBack`.
 */
export async function runUnderLease<T>(
  opts: LeaseRun,
  steps: { check(): Promise<T | undefined>; run(signal: AbortSignal): Promise<T> },
  handedBack: T,
): Promise<T> {
  for (;;) {
    if (opts.shutdown.aborted) return handedBack;
    const done = await steps.check();
    if (done !== undefined) return done;
    if (!(await takeLease(opts.redis, opts.key, opts.owner, opts.ms))) break;
    // Another run is on it (a rebalance moved the partition): wait for it to finish or for its lease to lapse.
    // A missed heartbeat is sent again on the next turn, and a sleep cut short by the shutdown is checked above.
    await opts.heartbeat().catch(() => {});
    await abortableSleep(Math.min(500, opts.ms / 4), opts.shutdown).catch(() => {});
  }

  const controller = new AbortController();
  const onShutdown = () => controller.abort(new HandBack("worker stopping"));
  if (opts.shutdown.aborted) onShutdown();
  opts.shutdown.addEventListener("abort", onShutdown);
  const lease = keepLease(opts.redis, opts.key, opts.owner, opts.ms, {
    heartbeat: opts.heartbeat,
    onLost: () => controller.abort(new HandBack("lease lost")),
  });
  try {
    return await steps.run(controller.signal);
  } catch (error) {
    if ((controller.signal.reason ?? error) instanceof HandBack) return handedBack;
    throw error;
  } finally {
    opts.shutdown.removeEventListener("abort", onShutdown);
    await lease.release();
  }
}
