import { hostname } from "node:os";
import path from "node:path";
import { ConfigError, getConfig } from "../lib/config";
import { loadEnvFiles } from "../lib/env-files";
import { startGenerationConsumer } from "../lib/jobs/generation-consumer";
import { modelSettings } from "../lib/jobs/list-models";
import { createKafka, createProducer, ensureTopics } from "../lib/kafka";
import { createLog } from "../lib/log";
import { configureMetrics, observeBroker, observeConsumers, observeRedis } from "../lib/metrics";
import { startWorkerOperations } from "../lib/worker/metrics-server";
import { createRedis } from "../lib/redis";
import { startTracing, stopTracing } from "../lib/tracing";
import { startPublicationConsumer } from "../lib/reels/publication-consumer";
import { warnAboutGraphVersion } from "../lib/graph/versions";
import { startInsightsSweep } from "../lib/reels/insights/start-insights-sweep";
import { startWebhookWorker } from "../lib/webhooks/start-webhook-worker";
import { startTokenRefresh } from "../lib/accounts/token-refresh/start-token-refresh";
import { startUsageFolding } from "../lib/usage/start-usage-folding";
import { registerWorker } from "../lib/worker/presence";
import { createWorkerServices } from "../lib/worker/services";
import type {
  RunningConsumer,
  RunningSchedule,
  StartConsumer,
  StartSchedule,
  WorkerContext,
} from "../lib/worker/worker-context";

/** The consumers this worker runs, by name: each a member of its topics' groups. */
const consumers: Record<string, StartConsumer> = {
  generation: startGenerationConsumer,
  reels: startPublicationConsumer,
  webhooks: startWebhookWorker,
};

/** Its schedules: work on a timer, each under a lease where one worker of the cluster must do it. */
const schedules: Record<string, StartSchedule> = {
  /** Instagram Login tokens refreshed before they expire. */
  "token-refresh": startTokenRefresh,
  /** The daily read of recent reels' insights. */
  "reel-insights": startInsightsSweep,
  /** The pending usage counts added to their buckets every second. */
  "usage-fold": startUsageFolding,
};

/** Consumers first, then schedules; stopped together. */
const parts = [...Object.entries(consumers), ...Object.entries(schedules)];

async function main() {
  // As `next start` does for the web server: .env and .env.local, never over the environment.
  loadEnvFiles(path.resolve(__dirname, ".."));
  const config = getConfig();
  modelSettings(config); // a bad LLM_PROVIDERS or MODEL_PRICES stops the worker here, as a bad variable does
  await startTracing({ serviceName: "dispatch-worker", otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  configureMetrics(config);
  const workerId = config.WORKER_ID ?? `${hostname()}-${process.pid}`;
  const log = createLog(`worker:${workerId}`);
  warnAboutGraphVersion(config.GRAPH_VERSION, log);
  const redis = observeRedis(createRedis(config.REDIS_URL), config);
  // ioredis reconnects by itself; the commands that need Redis fail and say so.
  redis.on("error", () => {});
  const kafka = createKafka(config.KAFKA_BROKERS, `dispatch-worker-${workerId}`, { requestTimeout: 30_000 });
  await ensureTopics(kafka, log);
  const producer = createProducer(kafka);
  observeBroker(producer, "producer");
  await producer.connect();
  const presence = observeConsumers(registerWorker(redis, workerId));
  const services = createWorkerServices(config, redis);
  const ctx: WorkerContext = { config, redis, kafka, producer, log, workerId, presence, services };

  const started: [string, RunningConsumer | RunningSchedule][] = [];
  const operations = await startWorkerOperations(ctx, () => started.length === parts.length);

  // Listened for before the consumers start: the first one takes work while the others are still
  // joining their groups, and a signal then must stop it cleanly, not kill the process as a crash
  // would. What has started is stopped; a part still starting goes with the process, as after
  // a crash (whatever it took is redelivered), and none starts after the signal.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log("info", "stopping", { signal });
    await Promise.all(
      started.map(([name, part]) =>
        part.stop().catch((error) => log("error", "a consumer or schedule did not stop cleanly", { name, error })),
      ),
    );
    await presence.stop();
    await operations?.close();
    await stopTracing();
    // Stopping: a client that cannot close cleanly goes with the process.
    await producer.disconnect().catch(() => {});
    await redis.quit().catch(() => {});
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  for (const [name, start] of parts) {
    if (stopping) return;
    started.push([name, await start(ctx)]);
  }
  if (!stopping) log("info", "worker ready", { consumers: Object.keys(consumers), schedules: Object.keys(schedules) });
}

main().catch((error) => {
  // A ConfigError names every bad variable: its message is what an operator needs. Anything else keeps its stack.
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
