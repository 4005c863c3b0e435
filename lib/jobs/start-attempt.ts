import type { Redis } from "../redis";
import { redisScript } from "../redis-script";
import { statusIndexArgs, SYNC_STATUS_INDEX_LUA } from "../status-index";
import { jobHashArgs, type JobHash } from "./job-record";
import { JOB_STATUS_INDEXING, jobKeys } from "./keys";
import { FINAL_JOB_STATUSES } from "./status";

/** A new attempt of a job, marked RUNNING. */
export interface StartedAttempt {
  /** Its number, counted in `attempts`. */
  attempt: number;
  startedAt: number;
  /** Stream messages earlier attempts wrote: the writer continues after them. */
  eventsWritten: number;
  /** The job's hash as it was once marked (cancel_requested and created_at are read from it). */
  hash: Record<string, string>;
}

// Marks the job RUNNING only while it is not final: a cancel that ended it while queued (after the
// run's check, before this) keeps its one final message, and no second one follows. One round trip
// for what were six (the mark, the attempt count, the first start, the cancel flag, the stream's
// length, the creation time), and the job moves to the RUNNING status index in the same step
// (status-index.ts). KEYS: state, events. ARGV: the fields to write (JSON), started_at, the job id,
// then statusIndexArgs.
const START = redisScript(`${SYNC_STATUS_INDEX_LUA}
local status = redis.call('HGET', KEYS[1], 'status')
if not status ${FINAL_JOB_STATUSES.map((s) => `or status == '${s}'`).join(" ")} then return {0} end
local attempt = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[1])))
redis.call('HSETNX', KEYS[1], 'started_at', ARGV[2])
syncStatusIndex(KEYS[1], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return {attempt, redis.call('LLEN', KEYS[2]), redis.call('HGETALL', KEYS[1])}`);

/** Marks the job RUNNING for `runId`'s next attempt; undefined when the job is final already (or gone). */
export async function startAttempt(
  redis: Redis,
  jobId: string,
  who: { workerId: string; runId: string },
  now: () => number,
): Promise<StartedAttempt | undefined> {
  const startedAt = now();
  const at = new Date(startedAt).toISOString();
  const fields: JobHash = { status: "RUNNING", worker_id: who.workerId, run_id: who.runId, attempt_started_at: at };
  const [attempt, eventsWritten, flat] = (await START.run(
    redis,
    [jobKeys.state(jobId), jobKeys.events(jobId)],
    [JSON.stringify(jobHashArgs(fields)), at, jobId, ...statusIndexArgs(JOB_STATUS_INDEXING)],
  )) as [number, number?, string[]?];
  if (!attempt || !flat) return undefined;
  const hash: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
  return { attempt, startedAt, eventsWritten: eventsWritten ?? 0, hash };
}
