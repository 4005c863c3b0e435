import { SpanStatusCode } from "@opentelemetry/api";
import type { Admin, Consumer, Producer } from "kafkajs";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { DEFAULT_METRICS_TENANT_LABELS, type Config } from "./config";
import type { ConsumerStats } from "./consume/parallel-consumer";
import type { Redis } from "./redis";
import { clientSpan, tracingStarted } from "./tracing";
import type { WorkerPresence } from "./worker/presence";

/**
 * Every Prometheus metric of Dispatch, declared once. The web server serves them at GET /metrics,
 * a worker on its METRICS_PORT. The registry lives on globalThis: Next bundles a module more than
 * once per process (instrumentation, each route), and two registries would each count half.
 *
 * Labels stay bounded: model names come from the configuration, Redis command and Kafka API names
 * from their protocols, Graph endpoints are normalised to a few shapes, and tenants go through
 * `tenantLabel` (the first METRICS_TENANT_LABELS tenants a process sees, then "other").
 */

const PREFIX = "dispatch_";
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const ROUND_TRIP_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The consumers of this process, read at every scrape. */
const consumerStats = new Map<string, () => ConsumerStats>();
/** The log-end offset of each partition a consumer fetched from, as its last batch said, by consumer and partition. */
const highWatermarks = new Map<string, Map<number, number>>();

function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  const registers = [registry];
  return {
    registry,
    jobsSubmitted: new Counter({
      name: `${PREFIX}jobs_submitted_total`,
      help: "Generation jobs accepted (202), by model and tenant.",
      labelNames: ["model", "tenant"],
      registers,
    }),
    jobsCompleted: new Counter({
      name: `${PREFIX}jobs_completed_total`,
      help: "Generation jobs that ended COMPLETED, by model and tenant.",
      labelNames: ["model", "tenant"],
      registers,
    }),
    jobsFailed: new Counter({
      name: `${PREFIX}jobs_failed_total`,
      help: "Generation jobs that ended FAILED, by model and tenant.",
      labelNames: ["model", "tenant"],
      registers,
    }),
    jobsCancelled: new Counter({
      name: `${PREFIX}jobs_cancelled_total`,
      help: "Generation jobs that ended CANCELLED, by model and tenant.",
      labelNames: ["model", "tenant"],
      registers,
    }),
    timeToFirstToken: new Histogram({
      name: `${PREFIX}job_time_to_first_token_seconds`,
      help: "From the start of a run to its first delta.",
      labelNames: ["model"],
      buckets: SECONDS,
      registers,
    }),
    jobDuration: new Histogram({
      name: `${PREFIX}job_duration_seconds`,
      help: "From the start of a run to its final state.",
      labelNames: ["model", "status"],
      buckets: SECONDS,
      registers,
    }),
    tokensPerSecond: new Histogram({
      name: `${PREFIX}job_tokens_per_second`,
      help: "Completion tokens per second of a finished run.",
      labelNames: ["model"],
      buckets: [1, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560],
      registers,
    }),
    consumerRunning: new Gauge({
      name: `${PREFIX}consumer_running`,
      help: "Messages (jobs, publications) this worker runs now, by consumer.",
      labelNames: ["consumer"],
      registers,
      collect() {
        this.reset();
        for (const [consumer, stats] of consumerStats) this.set({ consumer }, stats().running);
      },
    }),
    consumerCapacity: new Gauge({
      name: `${PREFIX}consumer_capacity`,
      help: "Messages this worker may run at once, by consumer (WORKER_CONCURRENCY).",
      labelNames: ["consumer"],
      registers,
      collect() {
        this.reset();
        for (const [consumer, stats] of consumerStats) this.set({ consumer }, stats().capacity);
      },
    }),
    consumerBuffered: new Gauge({
      name: `${PREFIX}consumer_buffered`,
      help: "Fetched, unsettled messages in this worker's window of a partition it holds.",
      labelNames: ["consumer", "partition"],
      registers,
      collect() {
        this.reset();
        for (const [consumer, stats] of consumerStats)
          for (const w of stats().windows) this.set({ consumer, partition: String(w.partition) }, w.buffered);
      },
    }),
    consumerPartitionLag: new Gauge({
      name: `${PREFIX}consumer_partition_lag`,
      help: "Messages of a partition this worker holds past its committed offset: the log-end offset its last fetch saw minus the committed one.",
      labelNames: ["consumer", "partition"],
      registers,
      collect() {
        this.reset();
        for (const [consumer, stats] of consumerStats) {
          const ends = highWatermarks.get(consumer);
          for (const w of stats().windows) {
            const end = ends?.get(w.partition);
            const committed = w.committed ?? w.watermark;
            if (end !== undefined && committed !== null)
              this.set({ consumer, partition: String(w.partition) }, Math.max(0, end - Number(committed)));
          }
        }
      },
    }),
    consumerLag: new Gauge({
      name: `${PREFIX}consumer_lag`,
      help: "Messages of a partition its consumer group has not committed yet: log-end offset minus committed offset.",
      labelNames: ["group", "topic", "partition"],
      registers,
    }),
    sseConnections: new Gauge({
      name: `${PREFIX}sse_connections`,
      help: "Server-sent event streams open on this web process (jobs and reel events).",
      registers,
    }),
    fileStreamsOpen: new Gauge({
      name: `${PREFIX}file_streams_open`,
      help: "Files being sent from disk by this process (videos, the API reference bundle): from the first read to the end, an error or the client leaving.",
      registers,
    }),
    redisRoundTrip: new Histogram({
      name: `${PREFIX}redis_round_trip_seconds`,
      help: "Redis commands from send to answer, by command and outcome (ok, error).",
      labelNames: ["command", "outcome"],
      buckets: ROUND_TRIP_SECONDS,
      registers,
    }),
    brokerRoundTrip: new Histogram({
      name: `${PREFIX}broker_round_trip_seconds`,
      help: "Kafka protocol requests from send to answer, by client (producer, consumer, admin) and API (Produce, Fetch, …).",
      labelNames: ["client", "api"],
      buckets: ROUND_TRIP_SECONDS,
      registers,
    }),
    graphCalls: new Counter({
      name: `${PREFIX}graph_calls_total`,
      help: "Calls to the Graph API, by endpoint shape and outcome (the Graph error code, or ok, or network).",
      labelNames: ["method", "endpoint", "code"],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: `${PREFIX}webhook_deliveries_total`,
      help: "Webhook delivery attempts, by event type and outcome (delivered, failed, disabled…).",
      labelNames: ["event", "outcome"],
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const holder = globalThis as unknown as {
  __dispatchMetrics?: Metrics;
  __dispatchTenantLabels?: Set<string>;
  __dispatchTenantLabelLimit?: number;
};

/** Applies the configuration (METRICS_TENANT_LABELS); the web server and the worker call it at start. */
export function configureMetrics(config: { METRICS_TENANT_LABELS: number }): void {
  holder.__dispatchTenantLabelLimit = config.METRICS_TENANT_LABELS;
}

/** The process's metrics, created on first use. */
export function getMetrics(): Metrics {
  holder.__dispatchMetrics ??= createMetrics();
  return holder.__dispatchMetrics;
}

/** A job accepted by the submit route. */
export function recordJobSubmitted(job: { model: string; tenantId: string }): void {
  getMetrics().jobsSubmitted.inc({ model: job.model, tenant: tenantLabel(job.tenantId) });
}

/** A run that wrote its job's final state: the outcome counter, and the timing histograms. */
export function recordJobFinished(job: {
  model: string;
  tenantId: string;
  status: string;
  durationMs: number;
  ttftMs: number | null;
  tokensPerSecond: number | null;
}): void {
  const metrics = getMetrics();
  const labels = { model: job.model, tenant: tenantLabel(job.tenantId) };
  if (job.status === "COMPLETED") metrics.jobsCompleted.inc(labels);
  else if (job.status === "FAILED") metrics.jobsFailed.inc(labels);
  else if (job.status === "CANCELLED") metrics.jobsCancelled.inc(labels);
  metrics.jobDuration.observe({ model: job.model, status: job.status }, job.durationMs / 1000);
  if (job.ttftMs !== null) metrics.timeToFirstToken.observe({ model: job.model }, job.ttftMs / 1000);
  if (job.tokensPerSecond !== null) metrics.tokensPerSecond.observe({ model: job.model }, job.tokensPerSecond);
}

/** The content type of `registry.metrics()`: Prometheus text format 0.0.4. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The value of a metric's `tenant` label: its own for the first `limit` tenants this process sees, "other" after, so the series stay bounded. */
export function tenantLabel(
  tenantId: string,
  limit = holder.__dispatchTenantLabelLimit ?? DEFAULT_METRICS_TENANT_LABELS,
): string {
  if (limit <= 0) return "all";
  const seen = (holder.__dispatchTenantLabels ??= new Set());
  if (seen.has(tenantId)) return tenantId;
  if (seen.size >= limit) return "other";
  seen.add(tenantId);
  return tenantId;
}

/** A Graph call and how it ended: "ok", Graph's error code, `http_<status>` or "network". */
export function recordGraphCall(method: string, path: string, code: string): void {
  getMetrics().graphCalls.inc({ method, endpoint: graphEndpoint(path), code });
}

/** Graph paths carry ids; this keeps their shape only (`/{id}/media_publish`), so the label set stays small. */
export function graphEndpoint(path: string): string {
  const [bare] = path.split("?");
  const shape = bare
    .replace(/^\/?v\d+\.\d+/, "")
    .split("/")
    // Edges (media, media_publish) have no digits; ids do.
    .map((part) => (/\d/.test(part) ? "{id}" : part))
    .join("/");
  return shape.startsWith("/") ? shape : `/${shape}`;
}

/** The worker's presence, also reporting each consumer it tracks to the consumer gauges. */
export function observeConsumers(presence: WorkerPresence): WorkerPresence {
  return {
    ...presence,
    track(consumer, stats) {
      consumerStats.set(consumer, stats);
      presence.track(consumer, stats);
    },
  };
}

const timed = new WeakSet<object>();

/** What a consumer's fetch said of a partition's log end (kafkajs's batch.highWatermark). */
export function recordHighWatermark(consumer: string, partition: number, highWatermark: string): void {
  let ends = highWatermarks.get(consumer);
  if (!ends) highWatermarks.set(consumer, (ends = new Map()));
  ends.set(partition, Number(highWatermark));
}

/** A webhook delivery attempt and how it ended (delivered, failed, disabled…); for lib/webhooks. */
export function recordWebhookDelivery(event: string, outcome: string): void {
  getMetrics().webhookDeliveries.inc({ event, outcome });
}

/**
 * Times every command of this client from send to answer (a pipeline's commands each count), and
 * traces the commands sent on their own within a traced job (a pipeline's or a MULTI's, the
 * batched deltas, are left out: one span per token would drown the trace). Only when asked
 * (`METRICS_REDIS_COMMANDS`) or while traces are recorded (startTracing ran first): the timer, the
 * promise callbacks and the span check on every command were about a tenth of a worker's CPU per
 * job (issue 24).
 */
export function observeRedis(redis: Redis, config: Pick<Config, "METRICS_REDIS_COMMANDS">): Redis {
  if (!config.METRICS_REDIS_COMMANDS && !tracingStarted()) return redis;
  const histogram = getMetrics().redisRoundTrip;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    // A command sent again from the offline queue passes here twice; time it once.
    if (!timed.has(command)) {
      timed.add(command);
      const end = histogram.startTimer({ command: command.name });
      const batched = command.inTransaction || command.pipelineIndex !== undefined;
      const span = batched
        ? undefined
        : clientSpan(`redis ${command.name}`, { "db.system.name": "redis", "db.operation.name": command.name });
      command.promise.then(
        () => {
          end({ outcome: "ok" });
          span?.end();
        },
        () => {
          end({ outcome: "error" });
          span?.setStatus({ code: SpanStatusCode.ERROR });
          span?.end();
        },
      );
    }
    return send(command, stream);
  };
  return redis;
}

/** Records the round trip of every Kafka protocol request this client makes. */
export function observeBroker(client: Producer | Consumer | Admin, name: "producer" | "consumer" | "admin"): void {
  const histogram = getMetrics().brokerRoundTrip;
  const events = client.events as { REQUEST: string };
  (client as Producer).on(events.REQUEST as Producer["events"]["REQUEST"], (event) =>
    histogram.observe({ client: name, api: event.payload.apiName }, event.payload.duration / 1000),
  );
}
