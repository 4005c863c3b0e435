import { describe, expect, it } from "vitest";
import { jobHashArgs, parseJobRecord, type JobHash } from "@/lib/jobs/job-record";
import { jobKeys } from "@/lib/jobs/keys";
import type { FinalJobStatus } from "@/lib/jobs/status";
import { parsePublicationRecord, publicationKeys, type PublicationHash } from "@/lib/reels/publication-record";
import { foldUsage, pendingEntry } from "@/lib/usage/fold-usage";
import { readUsage } from "@/lib/usage/read-usage";
import { queueReelUsage, recordJobUsage, recordReelUsage } from "@/lib/usage/record-usage";
import { usageField } from "@/lib/usage/usage-facts";
import { usageKeys } from "@/lib/usage/usage-keys";
import { bucketResults } from "@/lib/usage/usage-report";
import { realRedisPerFile } from "./real-redis";

/** The counting script on a real Redis: once per job, once per arrival of a publication at a final status. */
const redis = realRedisPerFile();
const NOW = Date.parse("2026-11-26T12:30:00Z");
const RANGE = {
  fromMs: Date.parse("2026-11-26T12:00:00Z"),
  toMs: Date.parse("2026-11-26T13:00:00Z"),
  bucket: "hour" as const,
};

async function finalJob(id: string, fields: JobHash = {}) {
  const hash: JobHash = {
    job_id: id,
    tenant_id: "acme",
    model_name: "local-ngram",
    temperature: "0",
    max_tokens: "10",
    status: "COMPLETED",
    created_at: "2026-11-26T12:10:00.000Z",
    completed_at: "2026-11-26T12:11:00.000Z",
    usage: JSON.stringify({ prompt_tokens: 4, completion_tokens: 10, total_tokens: 14 }),
    cost: JSON.stringify({ currency: "USD", amount: 0.0000066 }),
    ttft_ms: "12",
    tokens_per_second: "40",
    ...fields,
  };
  await redis().hset(jobKeys.state(id), ...jobHashArgs(hash));
  const record = parseJobRecord(await redis().hgetall(jobKeys.state(id)))!;
  return { ...record, status: record.status as FinalJobStatus };
}

const jobsCounted = async () => {
  const [bucket] = await readUsage(redis(), "acme", RANGE);
  return bucketResults(bucket, undefined)[0];
};

describe("recording a job's usage", () => {
  it("counts a job once, however often it is asked, and marks it counted in the same step", async () => {
    const job = await finalJob("job-once");
    const results = await Promise.all([1, 2, 3].map(() => recordJobUsage(redis(), job, NOW)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await recordJobUsage(redis(), job, NOW)).toBe(false);
    expect(await redis().hget(jobKeys.state("job-once"), "usage_counted")).toBe("1");
    expect(await jobsCounted()).toMatchObject({
      jobs: 1,
      input_tokens: 4,
      output_tokens: 10,
      cost: { amount: 0.0000066 },
    });
  });

  it("counts nothing when the record no longer holds the status it was read with, or is gone", async () => {
    const job = await finalJob("job-moved");
    await redis().hset(jobKeys.state("job-moved"), "status", "RUNNING");
    expect(await recordJobUsage(redis(), job, NOW)).toBe(false);
    await redis().del(jobKeys.state("job-moved"));
    expect(await recordJobUsage(redis(), job, NOW)).toBe(false);
    // Nothing written for a record that is gone: no stray hash without an expiry.
    expect(await redis().exists(jobKeys.state("job-moved"))).toBe(0);
    expect(await jobsCounted()).toMatchObject({ jobs: 1 });
  });

  it("gives the hour's hash an expiry 35 days after the hour, the day's 400 days after the day", async () => {
    await foldUsage(redis());
    const expiries = await Promise.all([
      redis().call("EXPIRETIME", usageKeys.bucket("jobs", "acme", "hour", Date.parse("2026-11-26T12:00:00Z"))),
      redis().call("EXPIRETIME", usageKeys.bucket("jobs", "acme", "day", Date.parse("2026-11-26T00:00:00Z"))),
    ]);
    expect(expiries).toEqual([
      (Date.parse("2026-11-26T13:00:00Z") + 35 * 86_400_000) / 1000,
      (Date.parse("2026-11-27T00:00:00Z") + 400 * 86_400_000) / 1000,
    ]);
  });
});

describe("folding the pending counts into their buckets", () => {
  it("adds every pending count to its bucket once, summed per field, and empties the list", async () => {
    const hour = usageKeys.bucket("jobs", "fold", "hour", Date.parse("2026-11-26T12:00:00Z"));
    // Two counts, the second's cost above what Lua's default number format prints without an exponent.
    for (const amount of [0.5, 123_456.789]) {
      const job = await finalJob(`job-fold-${amount}`, {
        tenant_id: "fold",
        cost: JSON.stringify({ currency: "USD", amount }),
      });
      expect(await recordJobUsage(redis(), job, NOW)).toBe(true);
    }
    expect(await redis().llen(usageKeys.pending)).toBe(2);
    expect(await redis().exists(hour)).toBe(0);
    expect(await foldUsage(redis())).toBe(2);
    expect(await redis().llen(usageKeys.pending)).toBe(0);
    const fields = await redis().hgetall(hour);
    expect(fields[usageField("jobs", "local-ngram", "COMPLETED")]).toBe("2");
    expect(fields[usageField("in", "local-ngram", "COMPLETED")]).toBe("8");
    expect(fields[usageField("cost", "local-ngram", "COMPLETED")]).toBe("123457289000000");
    expect(await foldUsage(redis())).toBe(0);
    expect((await redis().hgetall(hour))[usageField("jobs", "local-ngram", "COMPLETED")]).toBe("2");
  });

  it("folds a backlog larger than one script's batch, batch by batch", async () => {
    const key = usageKeys.bucket("jobs", "backlog", "hour", Date.parse("2026-11-26T12:00:00Z"));
    const entry = pendingEntry([{ key, expireAt: Math.ceil(Date.now() / 1000) + 3600, fields: [["n", 1]] }]);
    await redis().rpush(usageKeys.pending, ...Array.from({ length: 1_201 }, () => entry));
    expect(await foldUsage(redis())).toBe(1_201);
    expect(await redis().hget(key, "n")).toBe("1201");
    expect(await redis().llen(usageKeys.pending)).toBe(0);
  });
});

describe("recording a publication's usage", () => {
  async function settled(id: string, status: string, updatedAt: string) {
    const hash: PublicationHash = {
      publication_id: id,
      tenant_id: "acme",
      account_id: "178414",
      status,
      created_at: "2026-11-26T12:00:00.000Z",
      updated_at: updatedAt,
    };
    await redis().hset(publicationKeys.state(id), hash);
    return parsePublicationRecord(await redis().hgetall(publicationKeys.state(id)))!;
  }
  const reels = async () => bucketResults((await readUsage(redis(), "acme", RANGE))[0], "account")[0];

  it("counts each arrival at a final status once: a failure, then the publish of its retry", async () => {
    const failed = await settled("pub-1", "FAILED", "2026-11-26T12:05:00.000Z");
    expect(await recordReelUsage(redis(), failed, NOW)).toBe(true);
    expect(await recordReelUsage(redis(), failed, NOW)).toBe(false);
    const published = await settled("pub-1", "PUBLISHED", "2026-11-26T12:20:00.000Z");
    expect(await recordReelUsage(redis(), published, NOW)).toBe(true);
    expect(await recordReelUsage(redis(), published, NOW)).toBe(false);
    expect(await reels()).toMatchObject({ account_id: "178414", published: 1, failed: 1, cancelled: 0 });
    // 20 minutes from submission to live: the p50 lies in that value's bucket, 10⁶ to 1.26 × 10⁶ ms.
    const result = await reels();
    const p50 = result.object === "usage.reels.result" ? result.submit_to_live_ms?.p50 : undefined;
    expect(p50).toBeGreaterThanOrEqual(1_000_000);
    expect(p50).toBeLessThanOrEqual(1_260_000);
  });

  it("counts nothing for a status that can still change", async () => {
    const timedOut = await settled("pub-2", "TIMED_OUT", "2026-11-26T12:06:00.000Z");
    expect(await recordReelUsage(redis(), timedOut, NOW)).toBe(false);
    expect(await reels()).toMatchObject({ published: 1, failed: 1 });
  });

  it("counts a final write in the write's own MULTI, and nothing when the write in front of it was refused", async () => {
    await settled("pub-3", "SCHEDULED", "2026-11-26T12:07:00.000Z");
    const cancelledAt = "2026-11-26T12:08:00.000Z";
    const facts = {
      tenantId: "acme",
      accountId: "178414",
      status: "CANCELLED",
      at: Date.parse(cancelledAt),
      submitToLiveMs: null,
    } as const;
    const cancel = (expected: string) =>
      queueReelUsage(
        redis()
          .multi()
          // A stand-in for appendEvent's conditional write: the status moves only from the expected one.
          .eval(
            "if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end redis.call('HSET', KEYS[1], 'status', 'CANCELLED', 'updated_at', ARGV[2]) return 1",
            1,
            publicationKeys.state("pub-3"),
            expected,
            cancelledAt,
          ),
        "pub-3",
        cancelledAt,
        facts,
        NOW,
      ).exec();
    expect(await cancel("QUEUED")).toEqual([
      [null, 0],
      [null, 0],
    ]);
    expect(await reels()).toMatchObject({ cancelled: 0 });
    expect(await cancel("SCHEDULED")).toEqual([
      [null, 1],
      [null, 1],
    ]);
    expect(await cancel("SCHEDULED")).toEqual([
      [null, 0],
      [null, 0],
    ]);
    expect(await redis().hget(publicationKeys.state("pub-3"), "usage_counted")).toBe(cancelledAt);
    expect(await reels()).toMatchObject({ published: 1, failed: 1, cancelled: 1 });
  });
});
