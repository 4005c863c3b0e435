import { consumeInBackground, retryUntilSettled } from "../partition-runner";
import { CONSUMER_GROUPS, TOPICS } from "../topics";
import type { RunningConsumer, StartConsumer, WorkerContext } from "../worker-context";
import { enqueueDuePublications } from "./enqueue-due-publications";
import { createGraphClient } from "./graph-client";
import { publicationMessageSchema } from "./publication";
import { runPublication, type PublicationDeps } from "./run-publication";

const SCHEDULER_TICK_MS = 1000;

/**
 * The worker's side of reel publishing: a member of `reel-publish-workers` on
 * reels.publish.requests. A publication runs for minutes (polling), so it runs in the background
 * of a paused partition (see PartitionRunner): one publication at a time per partition keeps an
 * account's posts in order without holding back other partitions. A worker that dies leaves the
 * offset uncommitted: the partition's next owner resumes the publication from Redis.
 */
export const startPublicationConsumer: StartConsumer = async (ctx: WorkerContext): Promise<RunningConsumer> => {
  const { config, producer, redis, log, workerId } = ctx;
  const shutdown = new AbortController();

  const deps: PublicationDeps = {
    redis,
    graph: createGraphClient({ graphUrl: config.GRAPH_URL, version: config.GRAPH_VERSION, fetch: (input, init) => fetch(input, init) }),
    accounts: config.REEL_ACCOUNTS,
    log,
    workerId,
    pollIntervalMs: config.REEL_POLL_INTERVAL_MS,
    pollAttempts: config.REEL_POLL_ATTEMPTS,
  };

  const consumer = await consumeInBackground(ctx, {
    name: "reels",
    groupId: CONSUMER_GROUPS.reels,
    topic: TOPICS.reels.name,
    async work(message, { partition, heartbeat }) {
      const parsed = parseMessage(message.value);
      if (!parsed) {
        log("warn", "skipping a message that is not a publication request", { partition, offset: message.offset });
        return "settled";
      }
      const id = parsed.publication_id;
      return retryUntilSettled(async () => ((await runPublication(deps, id, { heartbeat, shutdown: shutdown.signal })) === "handed-back" ? "handed-back" : "settled"), {
        log,
        shutdown: shutdown.signal,
        what: { publication_id: id },
      });
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
      await consumer.stop(graceMs, () => shutdown.abort());
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
