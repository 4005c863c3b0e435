import { createPublicAgent } from "../net/public-agent";
import type { RunningConsumer, WorkerContext } from "../worker/worker-context";
import { startDeliveryLoop } from "./delivery-loop";
import { consumeJobEvents } from "./job-events";
import { consumePublicationEvents } from "./publication-events";

/** The worker's webhook part: job events (the audit topic) and publication events into the queue, and the delivery loop. */
export async function startWebhookWorker(ctx: WorkerContext): Promise<RunningConsumer> {
  const { config, redis, log } = ctx;
  const consumers = [await consumeJobEvents(ctx), await consumePublicationEvents(ctx)];
  const dispatcher = createPublicAgent({ allowPrivate: config.ALLOW_PRIVATE_URLS, connectTimeoutMs: config.WEBHOOK_TIMEOUT_MS });
  const loop = startDeliveryLoop({
    redis,
    dispatcher,
    log,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retry: { baseMs: config.WEBHOOK_RETRY_BASE_MS, maxMs: config.WEBHOOK_RETRY_MAX_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
  });
  return {
    async stop() {
      // Stopping: a client that cannot close cleanly goes with the process.
      await Promise.all(consumers.map((consumer) => consumer.stop(0).catch(() => {})));
      await loop.stop();
      // Stopping: a client that cannot close cleanly goes with the process.
      await dispatcher.close().catch(() => {});
    },
  };
}
