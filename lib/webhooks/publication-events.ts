import type { Log } from "../log";
import type { Redis } from "../redis";
import { readPublication } from "../reels/read-publication";
import type { PublicationStatus } from "../reels/status";
import { enqueueWebhookEvent } from "./enqueue-event";
import type { WebhookEventType } from "./events";

const EVENT_OF_STATUS = {
  PUBLISHED: "reel.published",
  FAILED: "reel.failed",
  TIMED_OUT: "reel.needs_attention",
} as const satisfies Partial<Record<PublicationStatus, WebhookEventType>>;

const isNotified = (status: string): status is keyof typeof EVENT_OF_STATUS => Object.hasOwn(EVENT_OF_STATUS, status);

/**
 * Called once a publication's final write (PUBLISHED, FAILED, TIMED_OUT) is in Redis: queues its
 * webhook deliveries with the publication as GET returns it. Each write is its own occurrence (a
 * resumed publication that times out again notifies again); a repeat of the same write does not.
 * Never throws: a publication's outcome does not depend on its webhooks (a failure is logged).
 */
export async function notifyPublicationWebhooks(redis: Redis, tenantId: string, publicationId: string, status: string, log?: Log): Promise<void> {
  if (!isNotified(status)) return;
  const type = EVENT_OF_STATUS[status];
  try {
    const view = await readPublication(redis, tenantId, publicationId);
    if (!view || view.status !== status) return;
    await enqueueWebhookEvent(redis, { tenantId, type, occurrence: `reel:${publicationId}:${status}:${view.updated_at}`, at: new Date(view.updated_at), data: async () => view });
  } catch (error) {
    log?.("warn", "could not queue the publication's webhook deliveries", { publication_id: publicationId, error });
  }
}

/**
 * A publication that waits because its account needs reconnecting asks its owner to act:
 * reel.needs_attention, once per wait. Never throws, as above.
 */
export async function notifyPublicationNeedsReconnect(redis: Redis, tenantId: string, publicationId: string, log?: Log): Promise<void> {
  try {
    const view = await readPublication(redis, tenantId, publicationId);
    if (!view || view.scheduled_reason !== "needs_reconnect") return;
    await enqueueWebhookEvent(redis, { tenantId, type: "reel.needs_attention", occurrence: `reel:${publicationId}:needs_reconnect:${view.updated_at}`, at: new Date(view.updated_at), data: async () => view });
  } catch (error) {
    log?.("warn", "could not queue the publication's webhook deliveries", { publication_id: publicationId, error });
  }
}
