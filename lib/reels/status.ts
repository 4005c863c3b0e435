/**
 * A publication's statuses and the caption limit, dependency-free so the dashboard imports them as
 * values and never keeps a copy.
 */

export const PUBLICATION_STATUSES = [
  "SCHEDULED",
  "QUEUED",
  "CREATING",
  "PROCESSING",
  "PUBLISHING",
  "PUBLISHED",
  "FAILED",
  "TIMED_OUT",
  "CANCELLED",
] as const;
export type PublicationStatus = (typeof PUBLICATION_STATUSES)[number];

/** Nothing more can happen at all (CANCELLED: a scheduled or queued reel its owner withdrew). */
export const isFinalPublication = (status: string | undefined) =>
  status === "PUBLISHED" || status === "FAILED" || status === "CANCELLED";
/** Nothing more will happen without a client's action (TIMED_OUT can be resumed). */
export const isSettledPublication = (status: string | undefined) =>
  isFinalPublication(status) || status === "TIMED_OUT";
