import { consumeInParallel } from "../consume/parallel-consumer";
import { CONSUMER_GROUPS, TOPICS } from "../topics";
import type { RunningConsumer, StartConsumer, WorkerContext } from "../worker-context";
import { enqueueDuePublications } from "./enqueue-due-publications";
import { createGraphClient } from "./graph-client";
import { publicationMessageSchema } from "./publication-input";
import { runPublication, type PublicationDeps } from "./run-publication";

const SCHEDULER_TICK_MS = 1000;

/**
 * The worker's side of reel publishing: a member of `reel-publish-workers` on
 * reels.publish.requests, keyed by account. A publication runs for minutes (polling), so many run
 * at once (see consumeInParallel): a publication waiting on a slow container never holds back
 * another, of the same account or another; an account's publications start in the order they were
 * requested, at most TENANT_CONCURRENCY of them at once. A worker that dies leaves the offset
 * uncommitted: the partition's next owner resumes the publication from Redis.
 */
export const startPublicationConsumer: StartConsumer = async (ctx: WorkerContext): Promise<RunningConsumer> => {
  const { config, producer, redis, log, workerId } = ctx;

  const deps: PublicationDeps = {
    redis,
    graph: createGraphClient({ graphUrl: config.GRAPH_URL, version: config.GRAPH_VERSION, fetch: (input, init) => fetch(input, init) }),
    accounts: config.REEL_ACCOUNTS,
    log,
    workerId,
    pollIntervalMs: config.REEL_POLL_INTERVAL_MS,
    pollAttempts: config.REEL_POLL_ATTEMPTS,
  };

  const consumer = await consumeInParallel(ctx, {
    name: "reels",
    groupId: CONSUMER_GROUPS.reels,
    topic: TOPICS.reels.name,
    concurrency: config.WORKER_CONCURRENCY,
    maxBuffered: config.MAX_BUFFERED_PER_PARTITION,
    perKeyLimit: config.TENANT_CONCURRENCY,
    async work(message, control) {
      const parsed = parseMessage(message.value);
      if (!parsed) {
        log("warn", "skipping a message that is not a publication request", { partition: control.partition, offset: message.offset });
        return "settled";
      }
      return (await runPublication(deps, parsed.publication_id, control)) === "handed-back" ? "handed-back" : "settled";
    },
  });

  const scheduler = setInterval(() => {
    enqueueDuePublications({ redis, producer, workerId, now: Date.now(), lockMs: SCHEDULER_TICK_MS - 100 }).catch((error) =>
      log("warn", "could not enqueue due publications", { error: error instanceof Error ? error.message : String(error) }),
    );
  }, SCHEDULER_TICK_MS);
  log("info", "publication consumer started", { workerId, concurrency: config.WORKER_CONCURRENCY });

  return {
    async stop(graceMs = 5000) {
      // Take no new work; let publications in flight settle for a moment, then hand the rest back
      // uncommitted so the group gives them to another worker, which resumes them from Redis.
      clearInterval(scheduler);
      await consumer.stop(graceMs);
    },
  };
};

function parseMessage(value: Buffer | null) {
  try {
    const parsed = publicationMessageSchema.safeParse(JSON.parse(value?.toString("utf8") ?? ""));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
