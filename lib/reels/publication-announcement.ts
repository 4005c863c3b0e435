import { z } from "zod";
import type { PublicationView } from "./publication";
import { PUBLICATION_STATUSES } from "./status";

/**
 * The most entries of each kind (polls, steps) a settled announcement keeps of the timeline, the
 * latest: a container watched for a day has ~1,400 polls, and the message stays small.
 */
export const ANNOUNCED_TIMELINE_ENTRIES = 100;

/** The view is passed on to receivers as written; only what the webhook consumer reads is checked. */
const viewReadByConsumer = z.looseObject({ status: z.enum(PUBLICATION_STATUSES), updated_at: z.iso.datetime() });

/**
 * What reels.publication.events carries: a publication's write its owner should hear of, produced
 * after the write as a job's audit event follows its final write. `settled`: PUBLISHED, FAILED,
 * TIMED_OUT (or CANCELLED), with `publication`, the view as that write left it, so its webhook says
 * what happened even if a client retried or resumed it, or it expired, before the consumer came to
 * it. `needs_reconnect`: it waits for its account to be connected again; the consumer reads the
 * publication then, and a wait already over (reconnected, cancelled) asks no one's attention.
 * A settled announcement of a worker from before `publication` existed is read the same way.
 */
export const publicationAnnouncementSchema = z.object({
  publication_id: z.string().min(1),
  tenant_id: z.string().min(1),
  kind: z.enum(["settled", "needs_reconnect"]),
  status: z.enum(PUBLICATION_STATUSES),
  publication: z.custom<PublicationView>((value) => viewReadByConsumer.safeParse(value).success).optional(),
  /** `needs_reconnect`: the account it waits for, whose account.needs_reconnect does not depend on the publication still waiting. */
  account_id: z.string().min(1).optional(),
});

export type PublicationAnnouncement = z.infer<typeof publicationAnnouncementSchema>;

/** The announcement of a settled publication, with its view as GET returns it but for the older polls and steps. */
export function settledAnnouncement(view: PublicationView): PublicationAnnouncement {
  return {
    publication_id: view.publication_id,
    tenant_id: view.tenant_id,
    kind: "settled",
    status: view.status,
    publication: {
      ...view,
      polls: view.polls.slice(-ANNOUNCED_TIMELINE_ENTRIES),
      steps: view.steps.slice(-ANNOUNCED_TIMELINE_ENTRIES),
    },
  };
}
