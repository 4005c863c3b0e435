import {
  consumeInParallel,
  workerLimits,
  type ParallelConsumer,
  type ParallelOptions,
} from "../consume/parallel-consumer";
import type { Redis } from "../redis";
import type { WorkerClients } from "../worker/worker-clients";

/** The topic a group of webhook workers reads (a SUBSCRIPTIONS entry of lib/topics.ts). */
type EventSubscription<T> = Pick<ParallelOptions<T>, "name" | "groupId" | "topic" | "schema">;

/**
 * Reads a topic of events in a consumer group of its own, so the path that wrote the events knows
 * nothing of webhooks. It runs on the same kit as jobs and reels (joins again after a broker outage
 * or a crash, commits only settled offsets): an event is settled once `enqueue` has queued its
 * deliveries, a throw is tried again with backoff, so none is lost, and queuing it twice makes no
 * second delivery. An event that does not parse is logged and skipped: no webhook can be made of it.
 */
export function consumeEvents<T>(
  ctx: WorkerClients,
  subscription: EventSubscription<T>,
  enqueue: (redis: Redis, event: T) => Promise<unknown>,
  skip?: ParallelOptions<T>["skip"],
): Promise<ParallelConsumer> {
  return consumeInParallel(ctx, {
    ...subscription,
    skip,
    ...workerLimits(ctx.config),
    // Queuing an event's deliveries is a few Redis commands: no tenant slot for it (a slot cost two
    // round trips per event). Tenants' delivery attempts have their own cap (TENANT_ATTEMPTS_IN_FLIGHT).
    perKeyLimit: Infinity,
    // A webhook may go out half a second later; an idle group then fetches twice a second, not 20 times.
    fetchWaitMs: 500,
    async onInvalid(message, reason, control) {
      ctx.log("warn", "skipping an event that does not parse", {
        topic: subscription.topic,
        partition: control.partition,
        offset: message.offset,
        reason,
      });
    },
    async work(event) {
      await enqueue(ctx.redis, event);
      return "settled";
    },
  });
}
