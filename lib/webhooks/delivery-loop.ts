import type { Dispatcher } from "undici";
import type { Log } from "../log";
import type { Redis } from "../redis";
import { abortableSleep } from "../sleep";
import { attemptDelivery, claimDueDeliveries, type DeliveryClaim } from "./attempt-delivery";
import type { RetryPolicy } from "./backoff";
import { recordWebhookDelivery } from "../metrics";

export interface DeliveryLoopOptions {
  redis: Redis;
  dispatcher: Dispatcher;
  log: Log;
  timeoutMs: number;
  retry: RetryPolicy;
  /** Attempts this worker runs at once. */
  concurrency?: number;
  /** Attempts one tenant may have under way at once, across the workers. */
  tenantConcurrency?: number;
  /** How often it looks for due deliveries when none were waiting. */
  pollMs?: number;
}

export interface DeliveryLoop {
  /** Takes no more deliveries and waits for the attempts under way (each ends within its timeout). */
  stop(): Promise<void>;
}

/**
 * Delivers due webhook deliveries from the Redis queues (one per tenant, tenants taken in turn)
 * until stopped. Any number of workers may run it: a claim leases a delivery for longer than an attempt can take, so two workers
 * never run the same attempt at once, and a dead worker's claims come due again (at least once).
 */
export function startDeliveryLoop(options: DeliveryLoopOptions): DeliveryLoop {
  const concurrency = options.concurrency ?? 16;
  const pollMs = options.pollMs ?? 250;
  const leaseMs = options.timeoutMs + 30_000;
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  let wake: (() => void) | undefined;

  const run = (claim: DeliveryClaim, token: number) => {
    const attempt = attemptDelivery(options, claim, token)
      .then((attempt) => recordWebhookDelivery(attempt.eventType, attempt.outcome))
      .catch((error) =>
        options.log("error", "webhook attempt could not be recorded; it is tried again when its lease ends", {
          delivery_id: claim.id,
          error,
        }),
      )
      .finally(() => {
        running.delete(attempt);
        wake?.();
      });
    running.add(attempt);
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const free = concurrency - running.size;
      const claimed = await claimAndRun(options, free, leaseMs, run);
      // A full batch may mean more are due: look again at once (or when a slot frees up).
      if (claimed > 0 && claimed === free) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        abortableSleep(pollMs, stopping.signal).then(resolve, resolve);
      });
      wake = undefined;
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
      await Promise.allSettled([...running]);
    },
  };
}

/** Claims up to `free` due deliveries and starts each; how many it claimed (none when Redis could not say). */
async function claimAndRun(
  options: DeliveryLoopOptions,
  free: number,
  leaseMs: number,
  run: (claim: DeliveryClaim, token: number) => void,
): Promise<number> {
  if (free <= 0) return 0;
  try {
    const { claims, token } = await claimDueDeliveries(
      options.redis,
      Date.now(),
      free,
      leaseMs,
      options.tenantConcurrency,
    );
    for (const claim of claims) run(claim, token);
    return claims.length;
  } catch (error) {
    options.log("warn", "could not read due webhook deliveries", { error });
    return 0;
  }
}
