import type { Redis } from "../redis";
import type { PublicationAnnouncement } from "../reels/publication-announcement";
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
 * Turns one announcement into deliveries, with the publication as GET returns it: a settled one
 * (PUBLISHED, FAILED, TIMED_OUT; not CANCELLED) as its event, a wait for a reconnect as
 * reel.needs_attention. Each write is its own occurrence (a resumed publication that times out
 * again notifies again); a repeat of the same write does not. A publication that moved on since
 * (or expired) sends nothing.
 */
export async function enqueuePublicationEvent(redis: Redis, announcement: PublicationAnnouncement): Promise<string[]> {
  const { publication_id: id, tenant_id: tenantId, kind, status } = announcement;
  const type =
    kind === "needs_reconnect" ? "reel.needs_attention" : isNotified(status) ? EVENT_OF_STATUS[status] : undefined;
  if (!type) return [];
  const view = await readPublication(redis, tenantId, id);
  if (!view || view.status !== status) return [];
  if (kind === "needs_reconnect" && view.scheduled_reason !== "needs_reconnect") return [];
  const what = kind === "needs_reconnect" ? "needs_reconnect" : status;
  return enqueueWebhookEvent(redis, {
    tenantId,
    type,
    occurrence: `reel:${id}:${what}:${view.updated_at}`,
    at: new Date(view.updated_at),
    data: async () => view,
  });
}
