import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { spawnWorker, waitFor, type WorkerProcess } from "../helpers";

/**
 * A worker whose consumer crashes on a non-retriable group error (which kafkajs does not restart
 * by itself) starts a new consumer and gets its partitions. Its own broker, so errors can be injected.
 */
let broker: MockBroker;
let redis: Redis;
let worker: WorkerProcess | undefined;

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

describe("worker recovery", () => {
  it("rejoins its group after SyncGroup fails with a non-retriable protocol error", async () => {
    // SyncGroup (API key 14) answers INVALID_REQUEST (42), as the mock was seen to do under load.
    await broker.pushErrors(14, 1, 42);
    worker = spawnWorker({
      REDIS_URL: inject("redisUrl"),
      KAFKA_BROKERS: broker.bootstrap,
      KAFKA_EMBEDDED: "true",
      API_KEYS: "recovery:recovery-key-0123456789abcdef",
    }, "worker-recovery");
    const held = await waitFor(
      async () => {
        const raw = await redis.hget("workers:seen", "worker-recovery");
        const generation = raw ? (JSON.parse(raw).assignments.generation as number[] | undefined) : undefined;
        return generation?.length === 6 ? generation : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: "the worker to hold the requests topic" },
    );
    expect(held).toEqual([0, 1, 2, 3, 4, 5]);
    expect(worker.output()).toContain("starting a new one");
  });
});
