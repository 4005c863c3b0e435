import type { Redis } from "./redis";
import { redisScript } from "./redis-script";
import { abortableSleep } from "./sleep";

/**
 * Lua: `takeLease(key, owner, ms)`, takes the lease or says who holds it: '' when `owner` holds it
 * now, else the holder. For scripts that take a lease in the same step as other work.
 */
export const TAKE_LEASE_LUA = `
local function takeLease(key, owner, ms)
  local holder = redis.call('GET', key)
  if holder and holder ~= owner then return holder end
  redis.call('SET', key, owner, 'PX', ms)
  return ''
end`;
const TAKE = redisScript(`${TAKE_LEASE_LUA}
return takeLease(KEYS[1], ARGV[1], ARGV[2])`);
const RENEW = redisScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`,
);
const RELEASE = redisScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
);
// Writes the commands (ARGV[2], JSON), whoever holds the lease now, and gives the lease up if ARGV[1] holds it.
const WRITE_AND_RELEASE = redisScript(`
for _, command in ipairs(cjson.decode(ARGV[2])) do redis.call(unpack(command)) end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`);
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
  let released = false;
  return {
    async release(commands?: RedisCommand[]): Promise<void> {
      clearInterval(timer);
      if (released) return;
      released = true;
      if (commands?.length) await WRITE_AND_RELEASE.run(redis, [key], [owner, JSON.stringify(words(commands))]);
      else await releaseLease(redis, key, owner);
    },
  };
}

/**
 * A lease a run holds. `release` gives it up; with `commands`, it writes them in the same step (a
 * round trip less for a run's last write) and throws if they could not be written. Without, it
 * never throws: a lease not given up lapses by itself. Once released, further calls do nothing.
 */
export type HeldLease = ReturnType<typeof keepLease>;

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
  return (await WRITE_IF_HELD.run(redis, [key], [owner, JSON.stringify(words(commands))])) === 1;
}

const words = (commands: RedisCommand[]) => commands.map((command) => command.map(String));

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

/** What a claim found: the work ends with `done`; another run holds the lease; or the lease is this run's now. */
export type Claim<T> = { done: T } | { heldBy: string } | "taken";

/**
 * The steps of a run under a lease. Either `check` the record without the lease (a result ends
 * the run: already final, unknown, not due) and the lease is taken after it, or `claim` does both
 * in one step (one round trip: a script that reads the record and takes the lease). Then `run`
 * holds the lease.
 */
export type LeaseSteps<T> = { run(signal: AbortSignal, lease: HeldLease): Promise<T> } & (
  { check(): Promise<T | undefined> } | { claim(): Promise<Claim<T>> }
);

async function claimWith<T>(opts: LeaseRun, steps: LeaseSteps<T>): Promise<Claim<T>> {
  if ("claim" in steps) return steps.claim();
  const done = await steps.check();
  if (done !== undefined) return { done };
  const holder = await takeLease(opts.redis, opts.key, opts.owner, opts.ms);
  return holder ? { heldBy: holder } : "taken";
}

/**
 * The protocol both durable jobs follow: check the record and take the lease (LeaseSteps), or wait
 * while another run holds it and check again; then `run` under the lease with a signal that aborts
 * with a HandBack when the worker stops or the lease is lost. A HandBack anywhere becomes
 * `handedBack`. The lease is given up when `run` ends, unless `run` gave it up itself.
 */
export async function runUnderLease<T>(opts: LeaseRun, steps: LeaseSteps<T>, handedBack: T): Promise<T> {
  for (;;) {
    if (opts.shutdown.aborted) return handedBack;
    const claim = await claimWith(opts, steps);
    if (claim === "taken") break;
    if ("done" in claim) return claim.done;
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
    return await steps.run(controller.signal, lease);
  } catch (error) {
    if ((controller.signal.reason ?? error) instanceof HandBack) return handedBack;
    throw error;
  } finally {
    opts.shutdown.removeEventListener("abort", onShutdown);
    await lease.release();
  }
}
