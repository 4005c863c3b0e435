import { consumeInParallel, workerLimits } from "../consume/parallel-consumer";
import { SUBSCRIPTIONS } from "../topics";
import type { RunningConsumer, StartConsumer, WorkerContext } from "../worker/worker-context";
import { enqueueDuePublications } from "./enqueue-due-publications";
import { runPublication, type PublicationDeps } from "./run-publication";
import { createPublicAgent } from "../net/public-agent";
import { discardUpload, expireUpload, sweepUploads } from "../uploads/upload-store";
import { createPreflight } from "../video/preflight-video";
import { publicationKeys } from "./publication-record";
import { inSpan, messageTraceContext, SpanKind } from "../tracing";

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

  const deps = publicationDeps(ctx);

  const consumer = await consumeInParallel(ctx, {
    ...SUBSCRIPTIONS.reels,
    ...workerLimits(config),
    async onInvalid(message, reason, control) {
      log("warn", "skipping a message that is not a publication request", {
        partition: control.partition,
        offset: message.offset,
        reason,
      });
    },
    async work(request, message, control) {
      const span = {
        kind: SpanKind.CONSUMER,
        parent: messageTraceContext(message.headers),
        attributes: { publication_id: request.publication_id, tenant_id: request.tenant_id },
      };
      const outcome = await inSpan("publish reel", span, () => runPublication(deps, request.publication_id, control));
      if (outcome === "published" || outcome === "failed" || outcome === "timed-out")
        await releasePublicationUpload(redis, config.DATA_DIR, request.publication_id, outcome);
      return outcome === "handed-back" ? "handed-back" : "settled";
    },
  });

  const scheduler = setInterval(() => {
    enqueueDuePublications({ redis, producer, workerId, now: Date.now(), lockMs: SCHEDULER_TICK_MS - 100 }).catch(
      (error) => log("warn", "could not enqueue due publications", { error }),
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

/** The publish flow's clients and settings, from the worker's. */
function publicationDeps(ctx: WorkerContext): PublicationDeps {
  const { config, producer, redis, log, workerId, services } = ctx;
  return {
    redis,
    producer,
    graphs: services.graphs,
    connected: services.accounts,
    uploadUrls: services.uploadUrls,
    log,
    workerId,
    pollIntervalMs: config.REEL_POLL_INTERVAL_MS,
    pollAttempts: config.REEL_POLL_ATTEMPTS,
    watchIntervalMs: config.REEL_WATCH_INTERVAL_MS,
    dataDir: config.DATA_DIR,
    preflight: preflightWanted(config) ? createPreflight(PREFLIGHT(config)) : undefined,
    recordUsage: config.USAGE_AGGREGATES,
  };
}

/** Preflight probes against the real Graph API; the built-in sandbox checks every video itself. */
function preflightWanted(config: WorkerContext["config"]): boolean {
  return config.REEL_PREFLIGHT === "on" || (config.REEL_PREFLIGHT === "auto" && !config.GRAPH_SANDBOX);
}

const PREFLIGHT = (config: WorkerContext["config"]) => ({
  dispatcher: createPublicAgent({ allowPrivate: config.ALLOW_PRIVATE_URLS, ownPort: config.PORT }),
  maxBytes: config.UPLOAD_MAX_BYTES,
  timeoutMs: 120_000,
  maxRedirects: 5,
  dataDir: config.DATA_DIR,
});

/**
 * An uploaded video is kept until its publication ends (bounded storage): freed at once when it is
 * published; kept a day after a failure or a time-out, for a retry, then swept.
 */
async function releasePublicationUpload(
  redis: WorkerContext["redis"],
  dataDir: string,
  publicationId: string,
  outcome: "published" | "failed" | "timed-out",
): Promise<void> {
  const uploadId = await redis.hget(publicationKeys.state(publicationId), "upload_id").catch(() => null);
  if (!uploadId) return;
  // An upload not discarded now expires, and the upload sweep removes its file.
  await (outcome === "published" ? discardUpload(redis, dataDir, uploadId) : expireUpload(redis, uploadId)).catch(
    () => {},
  );
  if (Date.now() - lastUploadSweep > 60 * 60 * 1000) {
    lastUploadSweep = Date.now();
    // A sweep that fails runs again at the next interval.
    void sweepUploads(redis, dataDir).catch(() => {});
  }
}
let lastUploadSweep = 0;
