import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jobKeys } from "@/lib/jobs/keys";
import { TOPICS } from "@/lib/topics";
import { WORKERS_KEY } from "@/lib/live-workers";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { spawnWorker, waitFor, type WorkerProcess } from "../helpers";

/**
 * A worker whose consumer crashes on a non-retriable group error (which kafkajs does not restart
 * by itself) starts a new consumer and gets its partitions. Its own broker, so errors can be injected.
 */
let broker: MockBroker;
let redis: Redis;
let worker: WorkerProcess | undefined;
const workerEnv = () => ({
  REDIS_URL: inject("redisUrl"),
  KAFKA_BROKERS: broker.bootstrap,
  KAFKA_EMBEDDED: "true",
  API_KEYS: "recovery:recovery-key-0123456789abcdef",
  LOCAL_MODEL_TOKENS_PER_SECOND: "200",
});

beforeAll(async () => {
  broker = await startMockBroker();
  redis = new Redis(inject("redisUrl"));
});

afterAll(async () => {
  worker?.child.kill("SIGTERM");
  await worker?.exited;
  redis.disconnect();
  await broker.stop();
  worker?.assertNoUncaught();
});

/** Stops the worker of the test before, then starts `id` and waits until its first consumer has started. */
async function replaceWorker(id: string): Promise<WorkerProcess> {
  worker?.child.kill("SIGTERM");
  await worker?.exited;
  worker?.assertNoUncaught();
  const next = spawnWorker(workerEnv(), id);
  await waitFor(() => next.output().includes("generation consumer started"), {
    timeoutMs: 60_000,
    what: "the first consumer to start",
  });
  return next;
}

describe("worker recovery", () => {
  it("rejoins its group after SyncGroup fails with a non-retriable protocol error", async () => {
    // SyncGroup (API key 14) answers INVALID_REQUEST (42), as the mock was seen to do under load.
    await broker.pushErrors(14, 1, 42);
    worker = spawnWorker(
      {
        REDIS_URL: inject("redisUrl"),
        KAFKA_BROKERS: broker.bootstrap,
        KAFKA_EMBEDDED: "true",
        API_KEYS: "recovery:recovery-key-0123456789abcdef",
      },
      "worker-recovery",
    );
    const held = await waitFor(
      async () => {
        const raw = await redis.hget(WORKERS_KEY, "worker-recovery");
        const generation = raw ? (JSON.parse(raw).assignments.generation as number[] | undefined) : undefined;
        return generation?.length === 6 ? generation : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: "the worker to hold the requests topic" },
    );
    expect(held).toEqual([0, 1, 2, 3, 4, 5]);
    expect(worker.output()).toContain("starting a new one");
  });

  it("joins its groups and works after the broker went away while it was joining", async () => {
    worker = await replaceWorker("worker-outage");
    await broker.down();
    await new Promise((r) => setTimeout(r, 4000));
    await broker.up();

    const { parseConfig } = await import("@/lib/config");
    const { listModels } = await import("@/lib/jobs/list-models");
    const { submitJob } = await import("@/lib/jobs/submit-job");
    const { createKafka, createProducer } = await import("@/lib/kafka");
    const producer = createProducer(createKafka([broker.bootstrap], "recovery-test"));
    await producer.connect();
    const input = {
      tenant_id: "recovery",
      model_name: "local-ngram",
      prompt: "one two three four five six seven eight nine ten",
      temperature: 0,
      max_tokens: 5,
    };
    const { job } = await submitJob(
      { redis, producer: async () => producer, models: listModels(parseConfig(workerEnv())) },
      "recovery",
      input,
    );
    await producer.disconnect();
    await waitFor(async () => (await redis.hget(jobKeys.state(job.job_id), "status")) === "COMPLETED", {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: "the job to complete",
    });
    await waitFor(
      async () => {
        const raw = await redis.hget(WORKERS_KEY, "worker-outage");
        const assignments = raw ? JSON.parse(raw).assignments : {};
        return (
          assignments.reels?.length === TOPICS.reels.partitions &&
          assignments.webhooks?.length === TOPICS.completed.partitions
        );
      },
      { timeoutMs: 120_000, intervalMs: 200, what: "the reels and webhook-event consumers to join" },
    );
  });

  it("stops cleanly on SIGTERM while its later consumers are still joining", async () => {
    worker = await replaceWorker("worker-early-stop");
    // With the broker away the next consumer cannot join its group: the worker is mid-start.
    await broker.down();
    try {
      expect(worker.output()).not.toContain("worker ready");
      worker.child.kill("SIGTERM");
      await waitFor(() => worker!.output().includes('"stopping"'), { what: "the worker to say it stops" });
    } finally {
      await broker.up();
    }
    // Exit code 0 from its own stop, not a death by the signal (code null), which was the case when
    // the handler was installed only after every consumer had started.
    expect(await worker.exited).toBe(0);
    expect(worker.output()).not.toContain("worker ready");
    worker.assertNoUncaught();
    worker = undefined;
  }, 120_000);
});
