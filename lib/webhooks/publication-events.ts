import type { ConnectedAccounts } from "../accounts/connected-accounts";
import type { Redis } from "../redis";
import type { PublicationView } from "../reels/publication";
import type { PublicationAnnouncement } from "../reels/publication-announcement";
import { readPublication } from "../reels/read-publication";
import type { PublicationStatus } from "../reels/status";
import { enqueueAccountNeedsReconnect } from "./account-events";
import { enqueueWebhookEvent } from "./enqueue-event";
import type { WebhookEventType } from "./events";

const EVENT_OF_STATUS = {
  PUBLISHED: "reel.published",
  FAILED: "reel.failed",
  TIMED_OUT: "reel.needs_attention",
} as const satisfies Partial<Record<PublicationStatus, WebhookEventType>>;

const isNotified = (status: string): status is keyof typeof EVENT_OF_STATUS => Object.hasOwn(EVENT_OF_STATUS, status);

/**
 * Turns one announcement into deliveries: a settled publication (PUBLISHED, FAILED, TIMED_OUT; not
 * CANCELLED) as its event, with the publication as the announcement says that write left it, so a
 * retry, a resume or an expiry before this consumer reached it changes nothing; a wait for a
 * reconnect as reel.needs_attention, and its account's account.needs_reconnect (the reels path
 * reaches webhooks only through the log: a publication's refusal marked the account). Each write is
 * its own occurrence (a resumed publication that times out again notifies again); a repeat of the
 * same write does not, nor does a second publication waiting on the same refused token.
 */
export async function enqueuePublicationEvent(
  redis: Redis,
  accounts: Pick<ConnectedAccounts, "find">,
  announcement: PublicationAnnouncement,
): Promise<string[]> {
  const { publication_id: id, tenant_id: tenantId, kind, status } = announcement;
  const type =
    kind === "needs_reconnect" ? "reel.needs_attention" : isNotified(status) ? EVENT_OF_STATUS[status] : undefined;
  if (!type) return [];
  const view = announcement.publication ?? (await readAnnouncedNow(redis, announcement));
  const what = kind === "needs_reconnect" ? "needs_reconnect" : status;
  const queued = view
    ? await enqueueWebhookEvent(redis, {
        tenantId,
        type,
        occurrence: `reel:${id}:${what}:${view.updated_at}`,
        at: new Date(view.updated_at),
        data: async () => view,
      })
    : [];
  // The account's event, even when the reel no longer waits (cancelled since): the account still needs reconnecting.
  const accountId = kind === "needs_reconnect" ? (announcement.account_id ?? view?.account_id) : undefined;
  if (!accountId) return queued;
  const account = await accounts.find(tenantId, accountId);
  if (account?.status !== "needs_reconnect" || !account.error) return queued;
  const at = new Date(view?.updated_at ?? Date.now());
  return [...queued, ...(await enqueueAccountNeedsReconnect(redis, account, account.error, at))];
}

/**
 * An announcement without the view (a wait for a reconnect, or one from a worker older than the
 * view in it): the publication as GET returns it now, if it is still in the announced state.
 */
async function readAnnouncedNow(
  redis: Redis,
  { publication_id: id, tenant_id: tenantId, kind, status }: PublicationAnnouncement,
): Promise<PublicationView | undefined> {
  const view = await readPublication(redis, tenantId, id);
  if (!view || view.status !== status) return undefined;
  if (kind === "needs_reconnect" && view.scheduled_reason !== "needs_reconnect") return undefined;
  return view;
}
