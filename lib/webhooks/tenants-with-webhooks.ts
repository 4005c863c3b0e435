import type { Redis } from "../redis";
import { webhookKeys } from "./keys";

/** Where createWebhook names the tenant that got a webhook, so the workers' caches forget what they knew of it. */
export const WEBHOOK_CREATED_CHANNEL = "webhooks:created";

/** Whether a tenant has any webhook, from a cache; a tenant with none costs the job-event consumer nothing more. */
export interface TenantsWithWebhooks {
  has(tenantId: string): Promise<boolean>;
  /** True while the cache holds a fresh answer that the tenant has none: its events need not even be parsed. */
  knownWithout(tenantId: string): boolean;
}

/** Answers are kept this long at most, in case a creation's message was lost (it is not, while the subscriber is up). */
const KEPT_MS = 5000;
/** Tenants remembered at most; past it the cache starts over (tenants are few: the API keys' own). */
const MAX_TENANTS = 10_000;

/**
 * Every job's audit event goes through the webhook consumer, and most tenants have no webhook: a
 * Redis read per event for them was a round trip per job for nothing. The answer is cached per
 * tenant and dropped when createWebhook announces a new webhook on WEBHOOK_CREATED_CHANNEL, or when
 * the subscriber reconnects (a message may have been missed meanwhile). A deleted or disabled
 * webhook needs no message: a tenant said to have one is looked up in full by enqueueWebhookEvent.
 */
export async function watchTenantsWithWebhooks(
  redis: Redis,
  subscriber: Redis,
  now: () => number = Date.now,
): Promise<TenantsWithWebhooks> {
  const known = new Map<string, { has: boolean; until: number }>();
  // Counts creations heard of: an answer read while one arrived may be older than it, and is not kept.
  let heard = 0;
  subscriber.on("message", (channel: string, tenantId: string) => {
    if (channel !== WEBHOOK_CREATED_CHANNEL) return;
    heard++;
    known.delete(tenantId);
  });
  subscriber.on("ready", () => {
    heard++;
    known.clear();
  });
  // Subscribed on a ready connection only: ioredis's ready check fails on one in subscriber mode (see StreamHub).
  if (subscriber.status !== "ready") await new Promise((resolve) => subscriber.once("ready", resolve));
  await subscriber.subscribe(WEBHOOK_CREATED_CHANNEL);
  return {
    knownWithout(tenantId) {
      const cached = known.get(tenantId);
      return cached !== undefined && !cached.has && cached.until > now();
    },
    async has(tenantId) {
      const cached = known.get(tenantId);
      if (cached && cached.until > now()) return cached.has;
      const before = heard;
      const has = (await redis.scard(webhookKeys.tenantWebhooks(tenantId))) > 0;
      if (heard === before) {
        if (known.size >= MAX_TENANTS) known.clear();
        known.set(tenantId, { has, until: now() + KEPT_MS });
      }
      return has;
    },
  };
}
