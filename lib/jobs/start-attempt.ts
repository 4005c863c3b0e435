import { TAKE_LEASE_LUA } from "../lease";
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

/**
 * What a start found: the attempt started; the job final (or gone) and nothing done; or the lease
 * another run's (also a final job whose run has not yet sent its audit event).
 */
export type AttemptStart = { started: StartedAttempt } | { notStarted: Record<string, string> } | { heldBy: string };

// Marks the job RUNNING only while it is not final: a cancel that ended it while queued keeps its
// one final message, and no second one follows. In the same step it takes the job's lease for the
// run (or says which run has it), so a run's check, its lease and its start are one round trip; a
// job final or gone comes back as its hash, for what a final state is owed, unless its final run
// still holds the lease (it releases it with the audit mark): that run owes it, and a redelivery
// (its partition moved to another worker meanwhile) waits for it instead of sending a second event. One script for what
// were eight commands (the check, the lease, the mark, the attempt count, the first start, the
// cancel flag, the stream's length, the creation time), and the job moves to the RUNNING status
// index in the same step (status-index.ts). KEYS: state, events, lease. ARGV: the fields to write
// (JSON), started_at, the job id, statusIndexArgs, the run id, the lease's ms.
const START = redisScript(`${SYNC_STATUS_INDEX_LUA}${TAKE_LEASE_LUA}
local status = redis.call('HGET', KEYS[1], 'status')
if not status ${FINAL_JOB_STATUSES.map((s) => `or status == '${s}'`).join(" ")} then
  local finishing = status and redis.call('HGET', KEYS[1], 'audited') ~= '1' and redis.call('GET', KEYS[3])
  if finishing and finishing ~= ARGV[7] then return {-1, finishing} end
  return {0, redis.call('HGETALL', KEYS[1])}
end
local holder = takeLease(KEYS[3], ARGV[7], ARGV[8])
if holder ~= '' then return {-1, holder} end
local attempt = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[1])))
redis.call('HSETNX', KEYS[1], 'started_at', ARGV[2])
syncStatusIndex(KEYS[1], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return {attempt, redis.call('LLEN', KEYS[2]), redis.call('HGETALL', KEYS[1])}`);

/**
 * Takes the job's lease for `runId` (or renews it, when the run has it) and marks the job RUNNING
 * for the run's next attempt; the job final or gone, or its lease another run's, changes nothing.
 */
export async function startAttempt(
  redis: Redis,
  jobId: string,
  who: { workerId: string; runId: string; leaseMs: number },
  now: () => number,
): Promise<AttemptStart> {
  const startedAt = now();
  const at = new Date(startedAt).toISOString();
  const fields: JobHash = { status: "RUNNING", worker_id: who.workerId, run_id: who.runId, attempt_started_at: at };
  const [attempt, second, third] = (await START.run(
    redis,
    [jobKeys.state(jobId), jobKeys.events(jobId), jobKeys.lease(jobId)],
    [JSON.stringify(jobHashArgs(fields)), at, jobId, ...statusIndexArgs(JOB_STATUS_INDEXING), who.runId, who.leaseMs],
  )) as [number, (number | string | string[])?, string[]?];
  if (attempt === -1) return { heldBy: String(second) };
  if (attempt === 0) return { notStarted: pairs(second as string[]) };
  return { started: { attempt, startedAt, eventsWritten: Number(second ?? 0), hash: pairs(third ?? []) } };
}

function pairs(flat: string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
  return hash;
}
