import type { Redis } from "../redis";
import type { JobHash, JobRecord } from "../jobs/job-record";
import { jobKeys } from "../jobs/keys";
import type { FinalJobStatus } from "../jobs/status";
import {
  publicationKeys,
  readPublicationRecord,
  type PublicationHash,
  type PublicationRecord,
} from "../reels/publication-record";
import { jobFactsFromRecord, jobTallies, reelFactsFromRecord, reelTallies, type Tally } from "./usage-facts";

// Adds a record's tallies once: only while the record still holds the expected fields (the final
// state the tallies were read from), and only if its marker field does not hold the marker yet.
// The marker is set in the same script, so a redelivery, a crash between the final write and this
// one, or two runs racing can neither count it twice nor leave it half-counted.
const COUNT_ONCE = `
local spec = cjson.decode(ARGV[1])
for field, value in pairs(spec.expect) do
  if redis.call('HGET', KEYS[1], field) ~= value then return 0 end
end
if redis.call('HGET', KEYS[1], spec.marker[1]) == spec.marker[2] then return 0 end
redis.call('HSET', KEYS[1], spec.marker[1], spec.marker[2])
for _, tally in ipairs(spec.tallies) do
  for _, field in ipairs(tally.fields) do redis.call('HINCRBY', tally.key, field[1], field[2]) end
  redis.call('EXPIREAT', tally.key, tally.expire_at)
end
return 1`;

interface CountOnce {
  recordKey: string;
  expect: Record<string, string>;
  marker: [field: string, value: string];
  tallies: Tally[];
}

/** True when this call added the tallies; false when they were added before (or the record moved on). */
async function countOnce(redis: Redis, spec: CountOnce): Promise<boolean> {
  // Amounts as strings: Lua would print a large number in exponent form, which HINCRBY refuses.
  const tallies = spec.tallies.map((t) => ({
    key: t.key,
    expire_at: String(t.expireAt),
    fields: t.fields.map(([field, by]) => [field, String(by)]),
  }));
  const words = JSON.stringify({ expect: spec.expect, marker: spec.marker, tallies });
  return (await redis.eval(COUNT_ONCE, 1, spec.recordKey, words)) === 1;
}

/** A job is final once: its marker is a flag. */
const JOB_COUNTED: [keyof JobHash, string] = ["usage_counted", "1"];

/** Adds a final job to its tenant's usage, once (its `usage_counted` flag says it was). */
export function recordJobUsage(
  redis: Redis,
  record: JobRecord & { status: FinalJobStatus },
  now = Date.now(),
): Promise<boolean> {
  return countOnce(redis, {
    recordKey: jobKeys.state(record.job_id),
    expect: { status: record.status } satisfies JobHash,
    marker: JOB_COUNTED,
    tallies: jobTallies(jobFactsFromRecord(record, now), now),
  });
}

/**
 * Adds a publication's final status to its tenant's usage, once per arrival: a FAILED one retried
 * and then PUBLISHED counts in both. The marker is the time of the final write (`updated_at`).
 * Nothing for a status that is not final (TIMED_OUT can still be resumed).
 */
export async function recordReelUsage(redis: Redis, record: PublicationRecord, now = Date.now()): Promise<boolean> {
  const facts = reelFactsFromRecord(record);
  if (!facts) return false;
  const marker: [keyof PublicationHash, string] = ["usage_counted", record.updated_at];
  return countOnce(redis, {
    recordKey: publicationKeys.state(record.publication_id),
    expect: { status: record.status, updated_at: record.updated_at } satisfies PublicationHash,
    marker,
    tallies: reelTallies(facts, now),
  });
}

/** The same, for a publication whose final write has just been made: its record as it is now. */
export async function recordSettledReelUsage(redis: Redis, publicationId: string): Promise<boolean> {
  const record = await readPublicationRecord(redis, publicationId);
  return record ? recordReelUsage(redis, record) : false;
}
