import type { Admin, Kafka } from "kafkajs";
import type { Redis } from "../../../lib/redis";
import { CONSUMER_GROUPS, TOPICS } from "../../../lib/topics";
import type { ManagedProcess, Stack } from "../../lib/stack";
import { sleep } from "./stats";

export interface Tenant {
  id: string;
  key: string;
  /** The partition of ai.generation.requests its jobs land on (keyed by tenant). */
  partition: number;
}

/** What every figure gets: the running stack, clients of its Redis and broker, and the tenants. */
export interface BenchContext {
  root: string;
  dataDir: string;
  stack: Stack;
  url: string;
  /** The first tenant (`demo`). */
  demo: Tenant;
  /** Tenants chosen so their jobs cover every partition evenly. */
  spread: Tenant[];
  redis: Redis;
  kafka: Kafka;
  admin: Admin;
  reelAccount: { id: string; token: string };
  scale: number;
  log(message: string): void;
}

export const auth = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.key}` });

export async function postJson(
  ctx: BenchContext,
  path: string,
  tenant: Tenant,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${ctx.url}${path}`, {
    method: "POST",
    headers: { ...auth(tenant), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function getJson<T = Record<string, unknown>>(
  ctx: BenchContext,
  path: string,
  tenant: Tenant,
): Promise<T> {
  const response = await fetch(`${ctx.url}${path}`, { headers: auth(tenant) });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/**
 * How many record batches hold `expected` messages of `topic`, read from the start by a group of
 * its own. The embedded broker answers a fetch with one batch per partition, so a backlog in
 * smaller batches takes more fetches to drain: a drain's speed follows how the submissions were
 * batched (lib/accept/send-batched.ts), which is worth seeing beside it.
 */
export async function recordBatches(
  ctx: BenchContext,
  topic: string,
  expected: number,
  timeoutMs = 60_000,
): Promise<number> {
  const consumer = ctx.kafka.consumer({ groupId: `bench-batches-${Date.now()}`, maxWaitTimeInMs: 50 });
  let batches = 0;
  let messages = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (batch.messages.length === 0) return;
        batches++;
        messages += batch.messages.length;
      },
    });
    const deadline = Date.now() + timeoutMs;
    while (messages < expected) {
      if (Date.now() > deadline) throw new Error(`read ${messages} of ${expected} messages of ${topic}`);
      await sleep(50);
    }
  } finally {
    await consumer.disconnect();
  }
  return batches;
}

/** Jobs waiting in ai.generation.requests for the worker group: high watermark minus committed offset. */
export async function consumerLag(admin: Admin): Promise<number> {
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(TOPICS.requests.name),
    admin.fetchOffsets({ groupId: CONSUMER_GROUPS.generation, topics: [TOPICS.requests.name] }),
  ]);
  const done = new Map(committed.partitions.map((p) => [p.partition, Number(p.offset)]));
  return ends.reduce((sum, p) => {
    const at = done.get(p.partition) ?? -1;
    return sum + Number(p.high) - (at < 0 ? Number(p.low) : at);
  }, 0);
}

export interface WorkerSet {
  workers: ManagedProcess[];
  /** performance.now() when they were spawned. */
  spawnedAt: number;
  /** Resolves once they are all alive and, for each named consumer, hold every partition between them. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/** Starts `count` worker processes through the stack (as npm start does) with extra env. */
export function startWorkers(
  ctx: BenchContext,
  count: number,
  env: Record<string, string> = {},
  consumers = ["generation"],
): WorkerSet {
  const spawnedAt = performance.now();
  const workers = Array.from({ length: count }, () => ctx.stack.startWorker(env));
  const ids = new Set(workers.map((w) => w.name));
  const ready = (async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for (const w of workers)
        if (w.child.exitCode !== null) throw new Error(`${w.name} exited with code ${w.child.exitCode}`);
      const beats = Object.entries(await ctx.redis.hgetall("workers:seen"))
        .filter(([id]) => ids.has(id))
        .map(([, raw]) => JSON.parse(raw) as { at: number; assignments: Record<string, number[]> });
      const complete = (consumer: string) => {
        const held = beats.flatMap((b) => b.assignments[consumer] ?? []);
        return held.length === TOPICS.requests.partitions && new Set(held).size === held.length;
      };
      if (beats.length === count && consumers.every(complete)) return;
      await sleep(100);
    }
    throw new Error(`${count} worker(s) did not join the group within 60 s`);
  })();
  ready.catch(() => {});
  return {
    workers,
    spawnedAt,
    ready,
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
    },
  };
}
