import { randomUUID } from "node:crypto";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { FINISHED_JOB_TTL_S, JOB_INDEX_BOUND, jobKeys, OPEN_JOB_TTL_S } from "@/lib/jobs/keys";
import { StreamWriter } from "@/lib/jobs/stream-writer";
import { JOB_WORK, submitJob } from "@/lib/jobs/submit-job";
import { createRedis, type Redis } from "@/lib/redis";
import { PUBLICATION_INDEX_BOUND, PUBLICATION_TTL_S } from "@/lib/reels/publication-record";
import { revealWork } from "@/lib/accept/accept-work";

/** Every Redis key a job writes has a bound, checked on the real Redis: an expiry, and for indexes a trim. */

let redis: Redis;

beforeAll(() => {
  redis = createRedis(inject("redisUrl"));
});

afterAll(async () => {
  await redis.quit();
});

const DAY_MS = 86_400_000;

describe("a job's event list", () => {
  it("expires while the job runs, and a late message never lengthens the finished job's 24 h", async () => {
    const jobId = randomUUID();
    const events = jobKeys.events(jobId);
    const writer = await StreamWriter.open(redis, jobId);
    await writer.delta("first");
    await writer.flush();
    const open = await redis.ttl(events);
    expect(open).toBeGreaterThan(OPEN_JOB_TTL_S - 60);
    expect(open).toBeLessThanOrEqual(OPEN_JOB_TTL_S);

    // The final write gives every key of the job 24 h; a run that lost the job writes one more delta.
    await redis.expire(events, FINISHED_JOB_TTL_S);
    const late = await StreamWriter.open(redis, jobId);
    await late.delta("late");
    await late.flush();
    expect(await redis.ttl(events)).toBeLessThanOrEqual(FINISHED_JOB_TTL_S);
    await redis.del(events);
  });
});

describe("a tenant's index", () => {
  const producer = { send: async () => [] } as unknown as Producer;
  const models = [
    {
      id: "local-ngram",
      provider: "local" as const,
      version: "1",
      description: "",
      price: { input_per_million: 0, output_per_million: 0 },
    },
  ];

  it("drops jobs whose keys have certainly expired when a job is submitted, and expires itself", async () => {
    const tenant = `bounds-${randomUUID().slice(0, 8)}`;
    const index = jobKeys.tenantIndex(tenant);
    const now = Date.now();
    const submitAt = async (ms: number) =>
      (
        await submitJob({ redis, producer: async () => producer, models, now: () => new Date(ms) }, tenant, {
          tenant_id: tenant,
          model_name: "local-ngram",
          prompt: "x",
          temperature: 0.2,
          max_tokens: 16,
        })
      ).job.job_id;
    const ancient = await submitAt(now - JOB_INDEX_BOUND.maxAgeMs - DAY_MS);
    const recent = await submitAt(now - DAY_MS);
    const fresh = await submitAt(now);
    expect(await redis.zrange(index, 0, -1)).toEqual([recent, fresh]);
    const ttl = await redis.pttl(index);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(JOB_INDEX_BOUND.maxAgeMs);
    expect(JOB_INDEX_BOUND.maxAgeMs).toBe((OPEN_JOB_TTL_S + FINISHED_JOB_TTL_S) * 1000);
    await redis.del(index, ...[ancient, recent, fresh].map(jobKeys.state));
  });

  it("keeps at most maxEntries, the newest", async () => {
    const prefix = `tenant:test-index:${randomUUID()}:`;
    const kind = {
      ...JOB_WORK,
      tenantIndex: (t: string) => prefix + t,
      indexBound: { maxAgeMs: DAY_MS, maxEntries: 3 },
    };
    const now = Date.now();
    for (let i = 0; i < 5; i++) await revealWork(redis, kind, "t", `m${i}`, now - 5 + i, now);
    expect(await redis.zrange(`${prefix}t`, 0, -1)).toEqual(["m2", "m3", "m4"]);
    const ttl = await redis.pttl(`${prefix}t`);
    expect(ttl).toBeGreaterThan(DAY_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(DAY_MS);
    await redis.del(`${prefix}t`);
  });

  it("keeps publications past their scheduling window and record lifetime", () => {
    expect(PUBLICATION_INDEX_BOUND.maxAgeMs).toBeGreaterThan((PUBLICATION_TTL_S + 75 * 86400) * 1000);
  });
});
