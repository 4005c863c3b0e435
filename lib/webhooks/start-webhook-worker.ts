import type { KafkaMessage } from "kafkajs";
import { createPublicAgent } from "../net/public-agent";
import { createSubscriber } from "../redis";
import type { RunningConsumer, WorkerContext } from "../worker/worker-context";
import { startDeliveryLoop } from "./delivery-loop";
import { SUBSCRIPTIONS } from "../topics";
import { consumeEvents } from "./consume-events";
import { enqueueJobEvent } from "./job-events";
import { enqueuePublicationEvent } from "./publication-events";
import { watchTenantsWithWebhooks } from "./tenants-with-webhooks";

/** The worker's webhook part: job events (the audit topic) and publication events into the queue, and the delivery loop. */
export async function startWebhookWorker(ctx: WorkerContext): Promise<RunningConsumer> {
  const { config, redis, log, services } = ctx;
  const subscriber = createSubscriber(config.REDIS_URL);
  // ioredis reconnects by itself; meanwhile the cache reads Redis, and those reads fail and say so.
  subscriber.on("error", () => {});
  const tenants = await watchTenantsWithWebhooks(redis, subscriber);
  // Read for account.needs_reconnect of an account a publication's refusal marked (never its token).
  const { accounts } = services;
  // Job events from the audit topic, publications' from reels.publication.events: each group only queues deliveries.
  // Both are keyed by tenant: an event of a tenant known to have no webhook is settled unparsed (a
  // settled publication's carries its view, up to tens of KB).
  const withoutWebhooks = (message: KafkaMessage) =>
    message.key !== null && tenants.knownWithout(message.key.toString());
  const consumers = [
    await consumeEvents(
      ctx,
      SUBSCRIPTIONS.webhooks,
      (_, event) => enqueueJobEvent(redis, tenants, event),
      withoutWebhooks,
    ),
    await consumeEvents(
      ctx,
      SUBSCRIPTIONS.reelWebhooks,
      (_, announcement) => enqueuePublicationEvent(redis, accounts, announcement),
      withoutWebhooks,
    ),
  ];
  const dispatcher = createPublicAgent({
    allowPrivate: config.ALLOW_PRIVATE_URLS,
    connectTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  const loop = startDeliveryLoop({
    redis,
    dispatcher,
    log,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retry: {
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxMs: config.WEBHOOK_RETRY_MAX_MS,
      windowMs: config.WEBHOOK_RETRY_WINDOW_MS,
    },
  });
  return {
    async stop() {
      // Stopping: a client that cannot close cleanly goes with the process.
      await Promise.all(consumers.map((consumer) => consumer.stop(0).catch(() => {})));
      await loop.stop();
      // Stopping: a client that cannot close cleanly goes with the process.
      await subscriber.quit().catch(() => {});
      await dispatcher.close().catch(() => {});
    },
  };
}
