import type { Admin } from "kafkajs";
import { ApiError, toProblem } from "./errors";
import type { Redis } from "./redis";
import { TOPICS } from "./topics";
import { withTimeout } from "./with-timeout";
import { liveWorkers, workerLoad } from "./live-workers";

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
  return {
    status: failing.length ? ("unavailable" as const) : ("ok" as const),
    failing,
    redis,
    kafka,
    workers: { count: workers.length, seen: workerLoad(workers) },
  };
}

export interface Readiness {
  ready: boolean;
  /** The parts that are not ready, each with why. */
  failing: { part: "redis" | "kafka" | "workers" | "consumers"; reason: string }[];
}

/**
 * Whether this process can do its work: Redis and the broker answer, and (on the web server) at
 * least one worker was seen lately, or (on a worker) its own consumers have started.
 */
export async function checkReadiness(deps: {
  redis: Redis;
  admin: () => Promise<Admin>;
  consumersStarted?: () => boolean;
}): Promise<Readiness> {
  const health = await checkHealth(deps);
  const failing: Readiness["failing"] = [];
  if (!health.redis.ok) failing.push({ part: "redis", reason: health.redis.error });
  if (!health.kafka.ok) failing.push({ part: "kafka", reason: health.kafka.error });
  if (deps.consumersStarted) {
    if (!deps.consumersStarted())
      failing.push({ part: "consumers", reason: "the worker's consumers have not started yet" });
  } else if (health.redis.ok && health.workers.count === 0) {
    failing.push({ part: "workers", reason: "no worker was seen in the last few seconds" });
  }
  return { ready: failing.length === 0, failing };
}

/** How long a load balancer waits before it asks a process that is not ready again. */
export const READY_RETRY_AFTER_S = 5;

/** 200 `{status: "ready"}`, or 503 problem+json with each part that is not ready in `errors`. */
export function readinessResponse(readiness: Readiness): Response {
  const headers = { "cache-control": "no-store" };
  if (readiness.ready)
    return new Response(JSON.stringify({ status: "ready" }), {
      status: 200,
      headers: { ...headers, "content-type": "application/json" },
    });
  const parts = readiness.failing.map((f) => f.part).join(", ");
  const { problem } = toProblem(
    new ApiError(
      "unavailable",
      `Not ready: ${parts}.`,
      readiness.failing.map((f) => ({ path: f.part, message: f.reason })),
    ),
  );
  return new Response(JSON.stringify(problem), {
    status: 503,
    headers: { ...headers, "content-type": "application/problem+json", "retry-after": String(READY_RETRY_AFTER_S) },
  });
}
