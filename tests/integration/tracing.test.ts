import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { readTopic, ROOT, waitFor } from "../helpers";

/**
 * A trace across the topic: the submit route and the worker's consumer run in this process with
 * an in-memory span exporter (a worker process's spans could not be read back), on the real
 * Redis and this file's own broker.
 */
const TENANT = "traced";
const KEY = "traced-key-0123456789abcdef";
const exporter = new InMemorySpanExporter();
let broker: MockBroker;
let consumer: RunningConsumer;
let stopWorker: () => Promise<void>;
let routes: { jobs: typeof import("@/app/v1/jobs/route"); job: typeof import("@/app/jobs/[id]/route") };

beforeAll(async () => {
  broker = await startMockBroker();
  Object.assign(process.env, {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: broker.bootstrap,
    KAFKA_EMBEDDED: "true",
    API_KEYS: `${TENANT}:${KEY}`,
    LOCAL_MODEL_TOKENS_PER_SECOND: "400",
  });
  const { startTracing } = await import("@/lib/tracing");
  await startTracing({ serviceName: "dispatch-test", spanProcessors: [new SimpleSpanProcessor(exporter)] });
  routes = { jobs: await import("@/app/v1/jobs/route"), job: await import("@/app/jobs/[id]/route") };

  // The worker's side, as worker/index.ts builds it.
  const { getConfig } = await import("@/lib/config");
  const { createKafka, createProducer } = await import("@/lib/kafka");
  const { createRedis } = await import("@/lib/redis");
  const { observeRedis } = await import("@/lib/metrics");
  const { registerWorker } = await import("@/lib/worker/presence");
  const { createLog } = await import("@/lib/log");
  const { startGenerationConsumer } = await import("@/lib/jobs/generation-consumer");
  const { createWorkerServices } = await import("@/lib/worker/services");
  const config = getConfig();
  const workerId = `trace-worker-${randomUUID().slice(0, 8)}`;
  const redis = observeRedis(createRedis(config.REDIS_URL), config);
  const kafka = createKafka(config.KAFKA_BROKERS, workerId);
  const producer = createProducer(kafka);
  await producer.connect();
  const presence = registerWorker(redis, workerId);
  consumer = await startGenerationConsumer({
    config,
    redis,
    kafka,
    producer,
    log: createLog(workerId),
    workerId,
    presence,
    services: createWorkerServices(config, redis),
  });
  stopWorker = async () => {
    await consumer.stop(1000);
    await presence.stop();
    await producer.disconnect();
    redis.disconnect();
  };
});

afterAll(async () => {
  await stopWorker?.();
  const { getServices } = await import("@/lib/web/services");
  await (await getServices().producer()).disconnect().catch(() => {});
  getServices().redis.disconnect();
  const { stopTracing } = await import("@/lib/tracing");
  await stopTracing();
  await broker?.stop();
});

describe("a trace across the topic", () => {
  it("a submit with a traceparent yields a worker span of the same trace, carried in the Kafka message's headers", async () => {
    const traceId = randomBytes(16).toString("hex");
    const clientSpanId = randomBytes(8).toString("hex");
    const response = await routes.jobs.POST(
      new Request("http://dispatch.test/v1/jobs", {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEY}`,
          "content-type": "application/json",
          traceparent: `00-${traceId}-${clientSpanId}-01`,
        },
        body: JSON.stringify({
          tenant_id: TENANT,
          model_name: "local-ngram",
          prompt: "A trace follows the job",
          max_tokens: 8,
        }),
      }),
      undefined,
    );
    expect(response.status).toBe(202);
    const { job_id } = (await response.json()) as { job_id: string };

    // The command on the topic carries the submit span's context.
    const messages = await readTopic(broker.bootstrap, "ai.generation.requests", (m) =>
      m.some((x) => x.value?.toString().includes(job_id)),
    );
    const headers = messages.find((m) => m.value?.toString().includes(job_id))!.headers!;
    expect(String(headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const spans = await waitFor(
      () => {
        const finished = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
        return finished.some((s) => s.name === "generate") ? finished : undefined;
      },
      { timeoutMs: 60_000, what: "the worker's span" },
    );
    const byName = (name: string) => spans.filter((s: ReadableSpan) => s.name === name);
    const [submit] = byName("POST /v1/jobs");
    const [generate] = byName("generate");
    // The submit span continues the client's span; the worker's continues the submit's.
    expect(submit.parentSpanContext?.spanId).toBe(clientSpanId);
    expect(submit.attributes["http.response.status_code"]).toBe(202);
    expect(String(headers.traceparent).split("-")[2]).toBe(submit.spanContext().spanId);
    expect(generate.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    expect(generate.attributes).toMatchObject({ job_id, model_name: "local-ngram", tenant_id: TENANT });
    // Redis commands of the run are spans of the same trace, children of the worker's span.
    const redisSpans = spans.filter(
      (s) => s.name.startsWith("redis ") && s.parentSpanContext?.spanId === generate.spanContext().spanId,
    );
    // (The run's commands are all scripts now: its start with the check and the lease (start-attempt.ts),
    // the deltas' batches, the final write, the audit mark with the lease's release; EVAL where this
    // Redis did not know the script yet.)
    expect(redisSpans.length).toBeGreaterThanOrEqual(4);
    for (const span of redisSpans) expect(["redis evalsha", "redis eval"]).toContain(span.name);

    await waitFor(async () => {
      const job = await routes.job.GET(
        new Request(`http://dispatch.test/jobs/${job_id}`, { headers: { authorization: `Bearer ${KEY}` } }),
        { params: Promise.resolve({ id: job_id }) },
      );
      return ((await job.json()) as { status: string }).status === "COMPLETED";
    });
  });

  it("every log line written inside a traced job carries its trace_id, and none outside", async () => {
    // A process of its own, as the log writes straight to file descriptor 2.
    const script = `
      const { startTracing, inSpan, activeTraceIds } = await import(${JSON.stringify(path.join(ROOT, "lib/tracing.ts"))});
      const { createLog } = await import(${JSON.stringify(path.join(ROOT, "lib/log.ts"))});
      const { InMemorySpanExporter, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-node");
      await startTracing({ serviceName: "log-test", spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] });
      await inSpan("job", {}, async () => createLog("worker:test")("info", "inside a span", { expected: activeTraceIds().trace_id }));
      createLog("worker:test")("info", "outside any span");`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "info" },
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
    const lines = stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const inside = lines.find((l) => l.message === "inside a span")!;
    expect(inside.expected).toMatch(/^[0-9a-f]{32}$/);
    expect(inside).toMatchObject({ trace_id: inside.expected, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(lines.find((l) => l.message === "outside any span")).not.toHaveProperty("trace_id");
  });
});
