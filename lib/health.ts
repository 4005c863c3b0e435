import type { Admin } from "kafkajs";
import type { Redis } from "./redis";
import { TOPICS } from "./topics";
import { withTimeout } from "./with-timeout";
import { workerLoad } from "./system/read-running";
import { liveWorkers } from "./workers";

type Part = { ok: true; latency_ms: number } | { ok: false; error: string };

async function probe(what: string, check: () => Promise<unknown>): Promise<Part> {
  const started = Date.now();
  try {
    await withTimeout(check(), 2000, what);
    return { ok: true, latency_ms: Date.now() - started };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Whether this server can reach Redis and the broker, and which workers were seen lately with their load. */
export async function checkHealth(deps: { redis: Redis; admin: () => Promise<Admin> }) {
  const [redis, kafka] = await Promise.all([
    probe("redis", () => deps.redis.ping()),
    probe("kafka", async () => (await deps.admin()).fetchTopicMetadata({ topics: [TOPICS.requests.name] })),
  ]);
  const workers = redis.ok ? await liveWorkers(deps.redis).catch(() => []) : [];
  const failing = [!redis.ok && "redis", !kafka.ok && "kafka"].filter(Boolean) as string[];
  return { status: failing.length ? ("unavailable" as const) : ("ok" as const), failing, redis, kafka, workers: { count: workers.length, seen: workerLoad(workers) } };
}
