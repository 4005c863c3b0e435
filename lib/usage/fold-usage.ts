import type { Redis } from "../redis";
import { redisScript } from "../redis-script";
import type { Tally } from "./usage-facts";
import { usageKeys } from "./usage-keys";

/*
 * The second half of counting usage: a count appends a record's tallies to the pending list in the
 * step that marks the record counted (record-usage.ts); folding adds a batch of them to the tenant
 * buckets at once. Workers fold every second (startUsageFolding), readers before they read.
 */

/**
 * A pending entry: a count's tallies, those with the same fields together (a job's hour and day
 * share theirs), each group `[[key, expireAt, key, expireAt, …], [field, amount, field, amount, …]]`.
 * Flat arrays of strings: half the JSON of one object per tally, and half the fold's time to read.
 * Amounts as strings, which the fold reads with tonumber: exact, whatever their size.
 */
export function pendingEntry(tallies: Tally[]): string {
  // A count's tallies share one fields array (talliesFor), so they make one group.
  const groups = new Map<Tally["fields"], [string[], string[]]>();
  for (const tally of tallies) {
    let group = groups.get(tally.fields);
    if (!group) groups.set(tally.fields, (group = [[], tally.fields.flatMap(([field, by]) => [field, String(by)])]));
    group[0].push(tally.key, String(tally.expireAt));
  }
  return JSON.stringify([...groups.values()]);
}

// Adds up to ARGV[1] pending entries to their buckets and removes them, in one step: each bucket
// field once with the entries' sum, each bucket's expiry once. Amounts are summed as Lua numbers
// (exact below 2^53) and written with %.0f, never in the exponent form HINCRBY refuses.
const FOLD = redisScript(`
local entries = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
local sums, expireAt, keys = {}, {}, {}
for _, entry in ipairs(entries) do
  for _, group in ipairs(cjson.decode(entry)) do
    local buckets, fields = group[1], group[2]
    for b = 1, #buckets, 2 do
      local key = buckets[b]
      local sum = sums[key]
      if not sum then
        sum = {}
        sums[key] = sum
        expireAt[key] = buckets[b + 1]
        keys[#keys + 1] = key
      end
      for f = 1, #fields, 2 do sum[fields[f]] = (sum[fields[f]] or 0) + tonumber(fields[f + 1]) end
    end
  end
end
for _, key in ipairs(keys) do
  for field, by in pairs(sums[key]) do redis.call('HINCRBY', key, field, string.format('%.0f', by)) end
  redis.call('EXPIREAT', key, expireAt[key])
end
if #entries > 0 then redis.call('LTRIM', KEYS[1], #entries, -1) end
return #entries`);

/** Pending entries one fold takes: a few milliseconds of Redis at most. */
const FOLD_BATCH = 500;

/**
 * Adds the pending counts to their buckets, a batch per script, until none is left or `maxBatches`
 * ran (counts keep arriving while a worker runs): what a reader calls before it reads the buckets,
 * and what each worker does every second. Returns the entries folded.
 */
export async function foldUsage(redis: Redis, maxBatches = 20): Promise<number> {
  let folded = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const n = Number(await FOLD.run(redis, [usageKeys.pending], [FOLD_BATCH]));
    folded += n;
    if (n < FOLD_BATCH) break;
  }
  return folded;
}

/** How often a worker folds: what a bucket read without its own fold could lag by. */
export const FOLD_EVERY_MS = 1000;
