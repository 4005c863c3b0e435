import { z } from "zod";
import { PUBLICATION_STATUSES } from "./status";

/**
 * What reels.publication.events carries: a publication's write its owner should hear of, produced
 * after the write as a job's audit event follows its final write. `settled`: PUBLISHED, FAILED,
 * TIMED_OUT (or CANCELLED); `needs_reconnect`: it waits for its account to be connected again. The
 * webhook consumer reads the publication itself, so the message names it and nothing more.
 */
export const publicationAnnouncementSchema = z.object({
  publication_id: z.string().min(1),
  tenant_id: z.string().min(1),
  kind: z.enum(["settled", "needs_reconnect"]),
  status: z.enum(PUBLICATION_STATUSES),
});

export type PublicationAnnouncement = z.infer<typeof publicationAnnouncementSchema>;
