import type { ChainableCommander } from "ioredis";
import type { Redis } from "../redis";
import type { JobHash, JobRecord } from "../jobs/job-record";
import { jobKeys } from "../jobs/keys";
import type { FinalJobStatus } from "../jobs/status";
import { publicationKeys, type PublicationHash, type PublicationRecord } from "../reels/publication-record";
import {
  jobFactsFromRecord,
  jobTallies,
  reelFactsFromRecord,
  reelTallies,
  type ReelFacts,
  type Tally,
} from "./usage-facts";
import { pendingEntry } from "./fold-usage";
import { usageKeys } from "./usage-keys";

// Counts a record once: only while the record still holds the expected fields (the final state
// the tallies were read from), and only if its marker field does not hold the marker yet. The
// marker is set, and the record's tallies appended to the pending list, in the same script, so a
// redelivery, a crash between the final write and this one, or two runs racing can neither count
// it twice nor leave it half-counted. The pending tallies reach their buckets with the next fold
// (foldUsage): one HINCRBY per bucket field a fold touches, not twelve a job.
// As a Lua function, `countOnce(record, spec)`, for a script that makes the final write itself
// (a job's, lib/jobs/final-write.ts): the count then goes with the write in one step. `spec` is
// the check as JSON, a newline, and the tallies as JSON (kept as they are, never decoded here).
export const COUNT_ONCE_LUA = `
local function countOnce(record, spec)
  local split = string.find(spec, '\\n', 1, true)
  local check = cjson.decode(string.sub(spec, 1, split - 1))
  for field, value in pairs(check.expect) do
    if redis.call('HGET', record, field) ~= value then return 0 end
  end
  if redis.call('HGET', record, check.marker[1]) == check.marker[2] then return 0 end
  redis.call('HSET', record, check.marker[1], check.marker[2])
  redis.call('RPUSH', '${usageKeys.pending}', string.sub(spec, split + 1))
  return 1
end`;
const COUNT_ONCE = `${COUNT_ONCE_LUA}
return countOnce(KEYS[1], ARGV[1])`;

interface CountOnce {
  recordKey: string;
  expect: Record<string, string>;
  marker: [field: string, value: string];
  tallies: Tally[];
}

/** COUNT_ONCE's arguments after the script, for EVAL on its own or on a MULTI. */
function countOnceArgs(spec: CountOnce): [numKeys: 1, recordKey: string, words: string] {
  const check = JSON.stringify({ expect: spec.expect, marker: spec.marker });
  return [1, spec.recordKey, `${check}\n${pendingEntry(spec.tallies)}`];
}

/** True when this call counted the record (its tallies now pending); false when it was counted before (or the record moved on). */
async function countOnce(redis: Redis, spec: CountOnce): Promise<boolean> {
  return (await redis.eval(COUNT_ONCE, ...countOnceArgs(spec))) === 1;
}

/** A job is final once: its marker is a flag. */
const JOB_COUNTED: [keyof JobHash, string] = ["usage_counted", "1"];

function jobCount(record: JobRecord & { status: FinalJobStatus }, now: number): CountOnce {
  return {
    recordKey: jobKeys.state(record.job_id),
    expect: { status: record.status } satisfies JobHash,
    marker: JOB_COUNTED,
    tallies: jobTallies(jobFactsFromRecord(record, now), now),
  };
}

/** Adds a final job to its tenant's usage, once (its `usage_counted` flag says it was). */
export function recordJobUsage(
  redis: Redis,
  record: JobRecord & { status: FinalJobStatus },
  now = Date.now(),
): Promise<boolean> {
  return countOnce(redis, jobCount(record, now));
}

/** COUNT_ONCE_LUA's `spec` for a job about to be written final as `record`: its final write counts it in the same script. */
export function jobCountSpec(record: JobRecord & { status: FinalJobStatus }, now = Date.now()): string {
  return countOnceArgs(jobCount(record, now))[2];
}

/**
 * Adds a publication's final status to its tenant's usage, once per arrival: a FAILED one retried
 * and then PUBLISHED counts in both. The marker is the time of the final write (`updated_at`).
 * Nothing for a status that is not final (TIMED_OUT can still be resumed).
 */
export async function recordReelUsage(redis: Redis, record: PublicationRecord, now = Date.now()): Promise<boolean> {
  const facts = reelFactsFromRecord(record);
  return facts ? countOnce(redis, reelCount(record.publication_id, record.updated_at, facts, now)) : false;
}

/**
 * A publication's count queued on the MULTI that makes the final write, after it: the count goes with the write
 * or not at all, so no crash can leave one without the other. `updatedAt` is the final write's. The
 * script counts only if the record then holds that status and updated_at, so a write refused in the
 * same MULTI counts nothing.
 */
export function queueReelUsage(
  multi: ChainableCommander,
  publicationId: string,
  updatedAt: string,
  facts: ReelFacts,
  now = Date.now(),
): ChainableCommander {
  return multi.eval(COUNT_ONCE, ...countOnceArgs(reelCount(publicationId, updatedAt, facts, now)));
}

/** A publication's arrival at a final status is marked by the time of that write (`updated_at`). */
function reelCount(publicationId: string, updatedAt: string, facts: ReelFacts, now: number): CountOnce {
  return {
    recordKey: publicationKeys.state(publicationId),
    expect: { status: facts.status, updated_at: updatedAt } satisfies PublicationHash,
    marker: ["usage_counted", updatedAt] satisfies [keyof PublicationHash, string],
    tallies: reelTallies(facts, now),
  };
}
