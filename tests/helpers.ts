import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { Kafka, logLevel, type KafkaMessage } from "kafkajs";
import { expect } from "vitest";
import { createKafka } from "../lib/kafka";
import { createWorkerServices } from "../lib/worker/services";
import type { WorkerContext } from "../lib/worker/worker-context";
import { WORKERS_KEY } from "../lib/live-workers";
import { assertNoUncaught } from "../scripts/lib/uncaught";

/*
 * Redis keys and topic names: tests import them from lib (jobKeys, TOPICS, WORKERS_KEY, the reel
 * and sandbox key modules). Only tests/unit/wire-names.test.ts spells them out, on purpose: it pins
 * the names other programs see, so renaming one in lib fails there instead of passing everywhere.
 */

export const ROOT = path.resolve(__dirname, "..");

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 30_000, intervalMs = 50, what = "condition" } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

export interface WorkerProcess {
  id: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Throws, quoting the lines, if the worker logged an uncaught exception or unhandled rejection: call it in afterAll. */
  assertNoUncaught(): void;
}

/** A real worker process (worker/index.ts), as npm start runs it. */
export function spawnWorker(
  env: Record<string, string>,
  id = `test-worker-${randomUUID().slice(0, 8)}`,
): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "worker/index.ts")], {
    cwd: ROOT,
    // No metrics port unless the test asks for one: the default port is one per machine, and another
    // test's worker or a second test run beside this one may hold it.
    env: { ...process.env, METRICS_PORT: "0", ...env, WORKER_ID: id },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { id, child, output: () => output, exited, assertNoUncaught: () => assertNoUncaught(output, `worker ${id}`) };
}

/** Waits until `worker`, alone in the group, holds all six partitions of the requests topic. */
export async function waitForWholeGroup(
  redis: { hget(key: string, field: string): Promise<string | null> },
  worker: WorkerProcess,
): Promise<void> {
  await waitFor(
    async () => {
      const beat = await redis.hget(WORKERS_KEY, worker.id);
      return beat && (JSON.parse(beat).assignments?.generation ?? []).length === 6;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: "the worker to hold every partition" },
  );
}

/** Stops a worker with SIGTERM, keeps its log in .test-data, and fails on any uncaught error it logged. */
export async function stopWorker(worker: WorkerProcess): Promise<void> {
  writeFileSync(`.test-data/${worker.id}.log`, worker.output());
  worker.child.kill("SIGTERM");
  await worker.exited;
  worker.assertNoUncaught();
}

/** Closes the web services (producer, Redis) a file's route handlers opened in this process. */
export async function closeWebServices(): Promise<void> {
  const { getServices } = await import("../lib/web/services");
  await (await getServices().producer()).disconnect().catch(() => {});
  getServices().redis.disconnect();
}

/** Reads a whole topic from the beginning with a throw-away group until `done` says it has what it needs. */
export async function readTopic(
  brokers: string,
  topic: string,
  done: (messages: KafkaMessage[]) => boolean,
  timeoutMs = 30_000,
): Promise<KafkaMessage[]> {
  const kafka = new Kafka({ clientId: "test-reader", brokers: brokers.split(","), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `test-reader-${randomUUID()}`,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 100,
  });
  const messages: KafkaMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void messages.push(message) });
  try {
    await waitFor(() => done(messages), { timeoutMs, intervalMs: 100, what: `messages on ${topic}` });
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

/** Parses a text/event-stream body into events. */
export function parseSse(text: string): { id?: string; event: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((block) => block.split("\n").some((l) => l.startsWith("data:")))
    .map((block) => {
      const fields: Record<string, string> = {};
      for (const line of block.split("\n")) {
        const at = line.indexOf(":");
        if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).trimStart();
      }
      return { id: fields.id, event: fields.event ?? "message", data: fields.data };
    });
}

/** Reads an SSE response to its end (or until `stop`) and returns the events. */
export async function readSse(
  response: Response,
  stop?: (events: ReturnType<typeof parseSse>) => boolean,
): Promise<ReturnType<typeof parseSse>> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (stop?.(parseSse(text))) {
      await reader.cancel();
      break;
    }
  }
  return parseSse(text);
}

/** Checks a problem+json answer of `status` in the documented shape, and returns it. */
export async function expectProblem(
  response: Response,
  status: number,
): Promise<{
  status: number;
  title: string;
  detail: string;
  type: string;
  errors?: { path: string; message: string }[];
}> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const problem = await response.json();
  expect(problem).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  });
  return problem;
}

/** A chunked body of `total` bytes without Content-Length, made as it is read; `pulled()` says how much was read. */
export function chunkedBody(total: number, chunk = 64 * 1024): { body: ReadableStream<Uint8Array>; pulled(): number } {
  let sent = 0;
  const bytes = new Uint8Array(chunk).fill(0x61);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += chunk;
      controller.enqueue(bytes);
    },
  });
  return { body, pulled: () => sent };
}

/** Each call answers 503 problem+json with a Retry-After, within `withinMs` (a dependency is down). */
export async function expectUnavailable(calls: (() => Promise<Response>)[], withinMs = 2000): Promise<void> {
  for (const call of calls) {
    const started = Date.now();
    const response = await call();
    expect(Date.now() - started).toBeLessThan(withinMs);
    await expectProblem(response, 503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  }
}

/**
 * A worker's context for consumers run inside the test process: its own Kafka client, no presence,
 * and the services built as worker/index.ts builds them (createWorkerServices), from `deps.config`.
 */
export function inProcessWorker(
  deps: Pick<WorkerContext, "config" | "redis" | "producer" | "log">,
  workerId: string,
): WorkerContext {
  return {
    ...deps,
    kafka: createKafka(deps.config.KAFKA_BROKERS, workerId),
    workerId,
    presence: { track: () => {}, changed: () => {}, stop: async () => {} },
    services: createWorkerServices(deps.config, deps.redis),
  };
}

/** OpenAI's documented order of a text response's stream events, before its terminal event (one delta standing for many). */
export const RESPONSE_EVENT_ORDER = [
  "response.created",
  "response.queued",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done",
];
