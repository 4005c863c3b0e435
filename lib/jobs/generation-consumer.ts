import type { RunningConsumer, WorkerContext } from "../worker/worker-context";
import { SUBSCRIPTIONS, TOPICS } from "../topics";
import { createSubscriber } from "../redis";
import { consumeInParallel, workerLimits } from "../consume/parallel-consumer";
import { inSpan, messageTraceContext, SpanKind } from "../tracing";
import { createAuditArchive } from "./audit-archive";
import { CANCEL_CHANNEL } from "./keys";
import { listModels } from "./list-models";
import { createProviders } from "./providers";
import { runGeneration, type GenerationDeps } from "./run-generation";

/**
 * The worker's side of generation jobs: a member of the `ai-generation-workers` group that runs
 * up to WORKER_CONCURRENCY jobs at once from all its partitions, tenants taking turns, each tenant
 * within TENANT_CONCURRENCY across the cluster and its jobs started in the order it submitted them
 * (see consumeInParallel). A command that is not a valid command goes to the DLQ (retried until
 * the DLQ has it) and is settled, so it never blocks.
 */
export async function startGenerationConsumer(ctx: WorkerContext): Promise<RunningConsumer> {
  const { config, producer, redis, log, workerId } = ctx;
  const running = new Map<string, AbortController>();
  const auditArchive = config.AUDIT_ARCHIVE_DIR ? createAuditArchive(config.AUDIT_ARCHIVE_DIR, workerId) : undefined;
  const deps: GenerationDeps = {
    redis,
    producer,
    log,
    workerId,
    models: listModels(config),
    providerFor: createProviders(config),
    running,
    recordUsage: config.USAGE_AGGREGATES,
    auditArchive,
  };

  const cancels = await subscribeToCancels(config.REDIS_URL, running);

  const consumer = await consumeInParallel(ctx, {
    ...SUBSCRIPTIONS.generation,
    ...workerLimits(config),
    fetchWaitMs: config.KAFKA_FETCH_WAIT_MS,
    async onInvalid(message, reason, control) {
      log("warn", "poison command sent to the DLQ", { partition: control.partition, offset: message.offset, reason });
      await producer.send({
        topic: TOPICS.dlq.name,
        acks: -1,
        messages: [
          {
            key: message.key,
            value: message.value,
            headers: { reason, source_partition: String(control.partition), source_offset: message.offset },
          },
        ],
      });
    },
    async work(command, message, control) {
      const { job_id, model_name, tenant_id } = command;
      const span = {
        kind: SpanKind.CONSUMER,
        parent: messageTraceContext(message.headers),
        attributes: { job_id, model_name, tenant_id, worker_id: workerId },
      };
      return (await inSpan("generate", span, () => runGeneration(deps, command, control))) === "handed-back"
        ? "handed-back"
        : "settled";
    },
  });
  log("info", "generation consumer started", {
    workerId,
    concurrency: config.WORKER_CONCURRENCY,
    tenantConcurrency: config.TENANT_CONCURRENCY,
    auditArchive: config.AUDIT_ARCHIVE_DIR ?? null,
  });

  return {
    async stop(graceMs = 5000) {
      // Take no new work; let jobs in flight finish for a moment, then hand the rest back
      // uncommitted so the group gives them to another worker.
      await consumer.stop(graceMs);
      await auditArchive?.close();
      // Stopping: a client that cannot close cleanly goes with the process.
      await cancels.quit().catch(() => {});
    },
  };
}

/** Cancellations arrive on CANCEL_CHANNEL by job id; each aborts the run of that job here, if any. */
async function subscribeToCancels(redisUrl: string, running: Map<string, AbortController>) {
  const cancels = createSubscriber(redisUrl);
  // ioredis reconnects by itself; the commands that need Redis fail and say so.
  cancels.on("error", () => {});
  cancels.on("message", (_channel: string, jobId: string) => running.get(jobId)?.abort(new Error("cancelled")));
  await cancels.subscribe(CANCEL_CHANNEL);
  return cancels;
}
