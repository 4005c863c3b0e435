import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import Redis from "ioredis";
import { Partitioners, type Producer } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { getConfig } from "@/lib/config";
import { jobKeys } from "@/lib/jobs/keys";
import { listModels } from "@/lib/jobs/list-models";
import { isFinalJob } from "@/lib/jobs/status";
import { submitJob } from "@/lib/jobs/submit-job";
import { createKafka, createProducer } from "@/lib/kafka";
import { TOPICS } from "@/lib/topics";
import { WORKERS_KEY } from "@/lib/live-workers";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { readTopic, spawnWorker, waitFor, type WorkerProcess } from "../helpers";

/**
 * Many jobs of a partition at once, on the real stack: real worker processes, the real Redis and
 * a broker of this file's own (so nothing left on the log reaches another file's workers).
 * docs/guarantees.md names each test below next to the promise it checks.
 */
const KEY = "parallel-key-0123456789abcdef";
const run = randomUUID().slice(0, 6);
const partitionOf = (tenant: string) =>
  Partitioners.DefaultPartitioner()({
    topic: TOPICS.requests.name,
    partitionMetadata: Array.from({ length: TOPICS.requests.partitions }, (_, i) => ({
      partitionId: i,
      leader: 0,
      partitionErrorCode: 0,
      replicas: [0],
      isr: [0],
    })),
    message: { key: tenant, value: "" },
  });
const flood = `flood-${run}`;
let lone = `lone-${run}`;
for (let i = 0; partitionOf(lone) !== partitionOf(flood); i++) lone = `lone-${run}-${i}`;
let backlog = `backlog-${run}`;
for (let i = 0; partitionOf(backlog) === partitionOf(flood); i++) backlog = `backlog-${run}-${i}`;
const tenants = {
  bulk: `bulk-${run}`,
  capped: `capped-${run}`,
  ordered: `ordered-${run}`,
  crash: `crash-${run}`,
  flood,
  lone,
  backlog,
};
/** At temperature 0 local-ngram continues this cycle without a natural end: a job runs its full max_tokens. */
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();

let broker: MockBroker;
let redis: Redis;
let env: Record<string, string>;
let workers: WorkerProcess[] = [];
let routes: { jobs: typeof import("@/app/v1/jobs/route") };

beforeAll(async () => {
  broker = await startMockBroker();
  env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: broker.bootstrap,
    KAFKA_EMBEDDED: "true",
    API_KEYS: Object.values(tenants)
      .map((t) => `${t}:${t}-${KEY}`)
      .join(","),
    LOCAL_MODEL_TOKENS_PER_SECOND: "20",
    RATE_LIMIT_PER_MINUTE: "0",
  };
  Object.assign(process.env, env);
  redis = new Redis(env.REDIS_URL);
  routes = { jobs: await import("@/app/v1/jobs/route") };
});

afterEach(async () => {
  await stopWorkers();
});

afterAll(async () => {
  const { getServices } = await import("@/lib/web/services");
  await (await getServices().producer()).disconnect().catch(() => {});
  getServices().redis.disconnect();
  redis?.disconnect();
  await broker?.stop();
});

async function startWorkers(count: number, extra: Record<string, string>) {
  const started = Array.from({ length: count }, () =>
    spawnWorker({ ...env, ...extra }, `parallel-${randomUUID().slice(0, 6)}`),
  );
  workers.push(...started);
  await waitFor(
    async () => {
      const seen = Object.values(await redis.hgetall(WORKERS_KEY)).map((raw) => JSON.parse(raw));
      const held = seen.filter((w) => started.some((x) => x.id === w.id)).map((w) => w.assignments.generation ?? []);
      return (
        held.length === count && held.every((p) => p.length > 0) && held.flat().length === TOPICS.requests.partitions
      );
    },
    { timeoutMs: 90_000, intervalMs: 200, what: `${count} worker(s) to share the partitions` },
  );
  return started;
}

async function stopWorkers() {
  for (const w of workers) writeFileSync(`.test-data/${w.id}.log`, w.output());
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));
  for (const w of workers) w.assertNoUncaught();
  workers = [];
}

async function submit(tenant: string, body: Record<string, unknown>): Promise<string> {
  const response = await routes.jobs.POST(
    new Request("http://x/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${tenant}-${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: tenant, model_name: "local-ngram", temperature: 0, prompt: CYCLE, ...body }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return (await response.json()).job_id;
}

async function statuses(ids: string[], field = "status"): Promise<(string | null)[]> {
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hget(jobKeys.state(id), field);
  return ((await pipeline.exec()) ?? []).map(([, value]) => value as string | null);
}

/** Samples how many of `ids` are RUNNING every 100 ms until all are final; returns every sample. */
async function sampleRunning(ids: string[], timeoutMs: number): Promise<number[]> {
  const samples: number[] = [];
  await waitFor(
    async () => {
      const now = await statuses(ids);
      samples.push(now.filter((s) => s === "RUNNING").length);
      return now.every(isFinalJob);
    },
    { timeoutMs, intervalMs: 100, what: "the jobs to finish" },
  );
  return samples;
}

describe("parallel consumption on the real stack", () => {
  it("runs 64 jobs of one tenant at once on one worker when its cap allows", async () => {
    await startWorkers(1, { WORKER_CONCURRENCY: "64", TENANT_CONCURRENCY: "64" });
    const ids = await Promise.all(Array.from({ length: 64 }, () => submit(tenants.bulk, { max_tokens: 100 })));
    const samples = await sampleRunning(ids, 120_000);
    expect(Math.max(...samples)).toBeGreaterThanOrEqual(48);
    expect(await statuses(ids)).toEqual(ids.map(() => "COMPLETED"));
  });

  it("keeps a tenant within TENANT_CONCURRENCY across two workers, and starts its jobs in submission order", async () => {
    const started = await startWorkers(2, { WORKER_CONCURRENCY: "16", TENANT_CONCURRENCY: "4" });
    // Spread one tenant's commands over every partition, so both workers hold some of them.
    const kafka = createKafka(broker.bootstrap.split(","), "parallel-test");
    const producer = createProducer(kafka);
    await producer.connect();
    let next = 0;
    const spreading = {
      send: (record) =>
        producer.send({
          ...record,
          messages: record.messages.map((m) => ({ ...m, partition: next++ % TOPICS.requests.partitions })),
        }),
    } as Producer;
    const deps = { redis, producer: async () => spreading, models: listModels(getConfig()) };
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const result = await submitJob(deps, tenants.capped, {
        tenant_id: tenants.capped,
        model_name: "local-ngram",
        prompt: CYCLE,
        temperature: 0,
        max_tokens: 30,
      });
      ids.push(result.job.job_id);
    }
    await producer.disconnect();
    const samples = await sampleRunning(ids, 120_000);
    expect(Math.max(...samples)).toBeLessThanOrEqual(4);
    expect(Math.max(...samples)).toBeGreaterThanOrEqual(2);
    expect(new Set(await statuses(ids, "worker_id"))).toEqual(new Set(started.map((w) => w.id)));
    expect(await statuses(ids)).toEqual(ids.map(() => "COMPLETED"));

    // One tenant's jobs sit on one partition: the worker starts them in the order they were submitted.
    const ordered: string[] = [];
    for (let i = 0; i < 12; i++) ordered.push(await submit(tenants.ordered, { max_tokens: 10 }));
    await sampleRunning(ordered, 120_000);
    const runs = (await statuses(ordered, "run_id")).map((runId) => {
      const [worker, , seq] = runId!.split(":");
      return { worker, seq: Number(seq) };
    });
    expect(new Set(runs.map((r) => r.worker)).size).toBe(1);
    expect(runs.map((r) => r.seq)).toEqual([...runs.map((r) => r.seq)].sort((a, b) => a - b));
  });

  it("finishes every job once when a worker with 50+ jobs in flight is SIGKILLed", async () => {
    const [victim] = await startWorkers(1, { WORKER_CONCURRENCY: "64", TENANT_CONCURRENCY: "64" });
    // 30 s each at 20 tokens/s: none can end before the 50th starts and the kill lands, however busy the machine.
    const ids = await Promise.all(Array.from({ length: 60 }, () => submit(tenants.crash, { max_tokens: 600 })));
    await waitFor(async () => (await statuses(ids)).filter((s) => s === "RUNNING").length >= 50, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: "50 jobs running",
    });
    victim.child.kill("SIGKILL");
    await victim.exited;
    workers = workers.filter((w) => w !== victim);
    victim.assertNoUncaught();
    writeFileSync(`.test-data/${victim.id}-killed.log`, victim.output());
    const [heir] = await startWorkers(1, { WORKER_CONCURRENCY: "64", TENANT_CONCURRENCY: "64" });

    await sampleRunning(ids, 180_000);
    expect(await statuses(ids)).toEqual(ids.map(() => "COMPLETED"));
    expect(new Set(await statuses(ids, "worker_id"))).toEqual(new Set([heir.id]));
    const events = await readTopic(broker.bootstrap, TOPICS.completed.name, (m) => {
      const seen = new Set(m.map((x) => JSON.parse(x.value!.toString()).job_id));
      return ids.every((id) => seen.has(id));
    });
    const perJob = new Map<string, number>();
    for (const e of events.map((x) => JSON.parse(x.value!.toString())))
      if (ids.includes(e.job_id)) perJob.set(e.job_id, (perJob.get(e.job_id) ?? 0) + 1);
    expect([...perJob.values()]).toEqual(ids.map(() => 1));
  });

  it("starts a lone tenant's job at once behind 2,000 long jobs of a neighbour on its partition", async () => {
    await startWorkers(1, { WORKER_CONCURRENCY: "64", TENANT_CONCURRENCY: "16" });
    const floodIds: string[] = [];
    for (let i = 0; i < 10; i++)
      floodIds.push(
        ...(await Promise.all(Array.from({ length: 200 }, () => submit(tenants.flood, { max_tokens: 4000 })))),
      );
    const submittedAt = Date.now();
    const loneId = await submit(tenants.lone, { max_tokens: 5 });
    const started = await waitFor(async () => (await redis.hget(jobKeys.state(loneId), "started_at")) ?? undefined, {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: "the lone job to start",
    });
    const startedFlood = (await statuses(floodIds, "started_at")).filter(Boolean).length;
    process.stdout.write(
      `lone job started ${Date.parse(started) - submittedAt} ms after its submission, behind ${floodIds.length} flood jobs\n`,
    );
    // It did not wait for the flood: the flood still had all but its cap's share waiting.
    expect(startedFlood).toBeLessThanOrEqual(16);
    expect(Date.parse(started) - submittedAt).toBeLessThan(10_000);
  });

  it("reads ahead no more than its window per partition and pauses that fetch", async () => {
    const [worker] = await startWorkers(1, {
      WORKER_CONCURRENCY: "4",
      TENANT_CONCURRENCY: "4",
      MAX_BUFFERED_PER_PARTITION: "50",
    });
    // Small produce batches, so one fetch brings at most 20 messages past the bound.
    for (let i = 0; i < 15; i++)
      await Promise.all(Array.from({ length: 20 }, () => submit(tenants.backlog, { max_tokens: 400 })));
    const partition = partitionOf(tenants.backlog);
    const window = await waitFor(
      async () => {
        const beat = JSON.parse((await redis.hget(WORKERS_KEY, worker.id)) ?? "{}");
        const w = beat.stats?.generation?.windows?.find((x: { partition: number }) => x.partition === partition);
        return w?.paused ? w : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: "the backlog's window to fill and pause" },
    );
    expect(window.buffered).toBeGreaterThanOrEqual(50);
    expect(window.buffered).toBeLessThanOrEqual(70);
    expect(window.running).toBeLessThanOrEqual(4);
  });
});
