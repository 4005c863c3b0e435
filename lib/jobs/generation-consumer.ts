import type { RunningConsumer, WorkerContext } from "../worker-context";
import { CONSUMER_GROUPS, TOPICS } from "../topics";
import { createSubscriber } from "../redis";
import { consumeInBackground, retryUntilSettled } from "../partition-runner";
import { generationCommandSchema, type GenerationCommand } from "./command";
import { CANCEL_CHANNEL } from "./keys";
import { listModels } from "./models";
import { createProviders } from "./providers";
import { runGeneration, type GenerationDeps } from "./run-generation";

/**
 * The worker's side of generation jobs: a member of the `ai-generation-workers` group. Each job
 * runs in the background of its paused partition (see PartitionRunner), so up to
 * WORKER_CONCURRENCY partitions generate at once, one job at a time per partition keeps a tenant's
 * commands in order, and a slow job never holds back another partition. A partition's offset is
 * committed only once its job is final. A command that is not a valid command goes to the DLQ and
 * its offset is committed, so it never blocks.
 */
export async function startGenerationConsumer(ctx: WorkerContext): Promise<RunningConsumer> {
  const { config, producer, redis, log, workerId } = ctx;
  const shutdown = new AbortController();
  const running = new Map<string, AbortController>();
  const deps: GenerationDeps = { redis, producer, log, workerId, models: listModels(config), providerFor: createProviders(config), running };

  const cancels = createSubscriber(config.REDIS_URL);
  cancels.on("error", () => {});
  cancels.on("message", (_channel: string, jobId: string) => running.get(jobId)?.abort(new Error("cancelled")));
  await cancels.subscribe(CANCEL_CHANNEL);

  const consumer = await consumeInBackground(ctx, {
    name: "generation",
    groupId: CONSUMER_GROUPS.generation,
    topic: TOPICS.requests.name,
    async work(message, { partition, heartbeat }) {
      const parsed = parseCommand(message.value);
      if (!parsed.success) {
        log("warn", "poison command sent to the DLQ", { partition, offset: message.offset, reason: parsed.reason });
        await producer.send({
          topic: TOPICS.dlq.name,
          acks: -1,
          messages: [{ key: message.key, value: message.value, headers: { reason: parsed.reason, source_partition: String(partition), source_offset: message.offset } }],
        });
        return "settled";
      }
      const command = parsed.command;
      return retryUntilSettled(async () => ((await runGeneration(deps, command, { heartbeat, shutdown: shutdown.signal })) === "handed-back" ? "handed-back" : "settled"), {
        log,
        shutdown: shutdown.signal,
        what: { job_id: command.job_id },
      });
    },
  });
  log("info", "generation consumer started", { workerId, concurrency: config.WORKER_CONCURRENCY });

  return {
    async stop(graceMs = 5000) {
      // Take no new work; let jobs in flight finish for a moment, then hand the rest back
      // uncommitted so the group gives them to another worker.
      await consumer.stop(graceMs, () => shutdown.abort());
      await cancels.quit().catch(() => {});
    },
  };
}

function parseCommand(value: Buffer | null): { success: true; command: GenerationCommand } | { success: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(value?.toString("utf8") ?? "");
  } catch {
    return { success: false, reason: "not JSON" };
  }
  const result = generationCommandSchema.safeParse(json);
  if (!result.success) return { success: false, reason: result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
  return { success: true, command: result.data };
}
