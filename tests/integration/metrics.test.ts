import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { freePort, startRedis, type RedisServer } from "../../scripts/lib/redis-server";
import { expectProblem, spawnWorker, waitFor, type WorkerProcess } from "../helpers";

/**
 * Health, readiness and /metrics on the real stack: this file's own Redis and broker (Redis is
 * stopped at the end), the web route handlers in this process, and a real worker process
 * serving its METRICS_PORT.
 */
const TENANT = "metered";
const KEY = "metered-key-0123456789abcdef";
const TOKEN = "metrics-token-0123456789";
let redis: RedisServer;
let broker: MockBroker;
let worker: WorkerProcess | undefined;
let workerPort: number;
let env: Record<string, string>;
let redisStopped = false;
let routes: {
  jobs: typeof import("@/app/v1/jobs/route");
  job: typeof import("@/app/jobs/[id]/route");
  metrics: typeof import("@/app/metrics/route");
  live: typeof import("@/app/api/health/live/route");
  ready: typeof import("@/app/api/health/ready/route");
};

beforeAll(async () => {
  redis = await startRedis({ dir: `.test-data/metrics-redis-${randomUUID().slice(0, 8)}` });
  broker = await startMockBroker();
  workerPort = await freePort();
  env = {
    REDIS_URL: redis.url,
    KAFKA_BROKERS: broker.bootstrap,
    KAFKA_EMBEDDED: "true",
    API_KEYS: `${TENANT}:${KEY}`,
    METRICS_TOKEN: TOKEN,
    METRICS_REDIS_COMMANDS: "true",
    LOCAL_MODEL_TOKENS_PER_SECOND: "400",
  };
  Object.assign(process.env, env);
  routes = {
    jobs: await import("@/app/v1/jobs/route"),
    job: await import("@/app/jobs/[id]/route"),
    metrics: await import("@/app/metrics/route"),
    live: await import("@/app/api/health/live/route"),
    ready: await import("@/app/api/health/ready/route"),
  };
});

async function stopWorker() {
  if (!worker) return;
  const stopping = worker;
  worker = undefined;
  stopping.child.kill("SIGTERM");
  await stopping.exited;
  writeFileSync(`.test-data/${stopping.id}.log`, stopping.output());
  stopping.assertNoUncaught();
}

afterAll(async () => {
  await stopWorker();
  const { getServices } = await import("@/lib/web/services");
  await (await getServices().producer()).disconnect().catch(() => {});
  getServices().redis.disconnect();
  await broker?.stop();
  if (!redisStopped) await redis?.stop();
});

type Samples = Map<string, number>;

/**
 * Parses Prometheus text format 0.0.4 strictly: every line is empty, a HELP, a TYPE or a sample of
 * a declared family, with a valid name, labels and value. Returns the samples by `name{labels}`.
 */
function parsePrometheus(text: string): Samples {
  const samples: Samples = new Map();
  const types = new Map<string, string>();
  const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
  const sample = new RegExp(
    `^(${NAME})(\\{(?:${LABEL}(?:,${LABEL})*)?,?\\})? (-?(?:\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?|\\+Inf|-Inf|NaN))( -?\\d+)?$`,
    "i",
  );
  expect(text.endsWith("\n")).toBe(true);
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue; // the format ignores empty lines
    if (line.startsWith("# HELP ")) {
      expect(line, line).toMatch(new RegExp(`^# HELP ${NAME} .*$`));
      continue;
    }
    if (line.startsWith("# TYPE ")) {
      const match = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
      expect(match, line).not.toBeNull();
      expect(types.has(match![1]), `${match![1]} typed twice`).toBe(false);
      types.set(match![1], match![2]);
      continue;
    }
    const match = sample.exec(line);
    expect(match, `not a Prometheus sample: ${line}`).not.toBeNull();
    const [, name, labels = "", value] = match!;
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count|total|created)$/, "");
    expect(types.has(family) || types.has(name.replace(/_(bucket|sum|count)$/, "")), `${name} has no TYPE`).toBe(true);
    samples.set(`${name}${labels}`, Number(value));
  }
  return samples;
}

const get = (samples: Samples, key: string) => samples.get(key) ?? 0;

async function webMetrics(): Promise<Samples> {
  const response = await routes.metrics.GET(
    new Request("http://dispatch.test/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }),
    undefined,
  );
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheus(await response.text());
}

async function workerMetrics(): Promise<Samples> {
  const response = await fetch(`http://127.0.0.1:${workerPort}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.status).toBe(200);
  return parsePrometheus(await response.text());
}

const submit = async (prompt: string) => {
  const response = await routes.jobs.POST(
    new Request("http://dispatch.test/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: TENANT, model_name: "local-ngram", prompt, max_tokens: 12 }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return ((await response.json()) as { job_id: string }).job_id;
};

const readStatus = async (id: string) => {
  const response = await routes.job.GET(
    new Request(`http://dispatch.test/jobs/${id}`, { headers: { authorization: `Bearer ${KEY}` } }),
    { params: Promise.resolve({ id }) },
  );
  return ((await response.json()) as { status: string }).status;
};

describe("health", () => {
  it("live answers 200 at once; ready is 503 problem+json naming the workers until one runs, then 200", async () => {
    const live = await routes.live.GET();
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });

    const notReady = await routes.ready.GET(new Request("http://dispatch.test/api/health/ready"), undefined);
    const problem = await expectProblem(notReady, 503);
    expect(problem.errors).toEqual([{ path: "workers", message: expect.any(String) }]);
    expect(Number(notReady.headers.get("retry-after"))).toBeGreaterThan(0);

    worker = spawnWorker({ ...env, METRICS_PORT: String(workerPort) }, `metrics-worker-${randomUUID().slice(0, 8)}`);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${workerPort}/api/health/live`)).status === 200, {
      timeoutMs: 60_000,
      what: "the worker's live endpoint",
    });
    await waitFor(async () => (await fetch(`http://127.0.0.1:${workerPort}/api/health/ready`)).status === 200, {
      timeoutMs: 60_000,
      what: "the worker to be ready",
    });
    expect(await (await fetch(`http://127.0.0.1:${workerPort}/api/health/ready`)).json()).toEqual({ status: "ready" });
    await waitFor(
      async () =>
        (await routes.ready.GET(new Request("http://dispatch.test/api/health/ready"), undefined)).status === 200,
      { timeoutMs: 30_000, what: "the web server to be ready" },
    );
  });
});

describe("GET /metrics", () => {
  it("asks for METRICS_TOKEN on the web server and on the worker's port", async () => {
    await expectProblem(await routes.metrics.GET(new Request("http://dispatch.test/metrics"), undefined), 401);
    await expectProblem(
      await routes.metrics.GET(
        new Request("http://dispatch.test/metrics", { headers: { authorization: "Bearer wrong-token-0123456789" } }),
        undefined,
      ),
      401,
    );
    expect((await fetch(`http://127.0.0.1:${workerPort}/metrics`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${workerPort}/nowhere`)).status).toBe(404);
  });

  it("parses as Prometheus text, and its counters move by exactly the work done: 3 jobs submitted, 3 completed", async () => {
    const labels = `{model="local-ngram",tenant="${TENANT}"}`;
    const [webBefore, workerBefore] = [await webMetrics(), await workerMetrics()];

    const ids = [
      await submit("The worker reads the log"),
      await submit("Redis holds the state"),
      await submit("Kafka keeps the order"),
    ];
    await waitFor(async () => (await Promise.all(ids.map(readStatus))).every((s) => s === "COMPLETED"), {
      timeoutMs: 60_000,
      what: "three jobs to complete",
    });

    const web = await webMetrics();
    expect(
      get(web, `dispatch_jobs_submitted_total${labels}`) - get(webBefore, `dispatch_jobs_submitted_total${labels}`),
    ).toBe(3);
    // The web server's Redis commands and broker requests were timed.
    expect(
      get(web, `dispatch_redis_round_trip_seconds_count{command="evalsha",outcome="ok"}`) +
        get(web, `dispatch_redis_round_trip_seconds_count{command="eval",outcome="ok"}`),
    ).toBeGreaterThan(0);
    expect(
      get(web, `dispatch_broker_round_trip_seconds_count{client="producer",api="Produce"}`),
    ).toBeGreaterThanOrEqual(1);
    // Consumer lag of the generation group, per partition, read from the broker.
    expect(
      [...web.keys()].filter((k) =>
        k.startsWith(`dispatch_consumer_lag{group="ai-generation-workers",topic="ai.generation.requests"`),
      ),
    ).toHaveLength(6);
    expect(get(web, "dispatch_process_resident_memory_bytes")).toBeGreaterThan(0);

    const after = await waitFor(
      async () => {
        const samples = await workerMetrics();
        return get(samples, `dispatch_jobs_completed_total${labels}`) -
          get(workerBefore, `dispatch_jobs_completed_total${labels}`) >=
          3
          ? samples
          : undefined;
      },
      { timeoutMs: 10_000, what: "the worker's completed counter" },
    );
    const delta = (key: string) => get(after, key) - get(workerBefore, key);
    expect(delta(`dispatch_jobs_completed_total${labels}`)).toBe(3);
    expect(delta(`dispatch_jobs_failed_total${labels}`)).toBe(0);
    expect(delta(`dispatch_job_duration_seconds_count{model="local-ngram",status="COMPLETED"}`)).toBe(3);
    expect(delta(`dispatch_job_time_to_first_token_seconds_count{model="local-ngram"}`)).toBe(3);
    expect(delta(`dispatch_job_tokens_per_second_count{model="local-ngram"}`)).toBe(3);
    expect(get(after, `dispatch_consumer_capacity{consumer="generation"}`)).toBe(64);
    expect(get(after, `dispatch_consumer_running{consumer="generation"}`)).toBe(0);
    // At least one produce round trip was timed: the three completed events may share one request
    // (jobs that end in the same turn are produced together, lib/accept/send-batched.ts).
    expect(
      get(after, `dispatch_broker_round_trip_seconds_count{client="producer",api="Produce"}`) -
        get(workerBefore, `dispatch_broker_round_trip_seconds_count{client="producer",api="Produce"}`),
    ).toBeGreaterThanOrEqual(1);
    // The partition the jobs were on: lag once they were fetched, none once the worker committed past them.
    await waitFor(
      async () => {
        const lags = [...(await workerMetrics())].filter(([key]) =>
          key.startsWith(`dispatch_consumer_partition_lag{consumer="generation"`),
        );
        return lags.length > 0 && lags.every(([, lag]) => lag === 0);
      },
      { timeoutMs: 15_000, what: "the worker's partition lag to reach 0" },
    );
  });
});

describe("readiness when Redis is down", () => {
  it("answers 503 naming redis, within the probe's 2 s; live still answers", async () => {
    await stopWorker();
    await redis.stop();
    redisStopped = true;
    const started = Date.now();
    const response = await routes.ready.GET(new Request("http://dispatch.test/api/health/ready"), undefined);
    expect(Date.now() - started).toBeLessThan(4000);
    const problem = await expectProblem(response, 503);
    expect(problem.errors?.map((e) => e.path)).toContain("redis");
    const live = await routes.live.GET();
    expect(live.status).toBe(200);
  });
});
