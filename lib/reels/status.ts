/**
 * A publication's statuses and the caption limit, dependency-free so the dashboard imports them as
 * values and never keeps a copy.
 */

export const PUBLICATION_STATUSES = ["SCHEDULED", "QUEUED", "CREATING", "PROCESSING", "PUBLISHING", "PUBLISHED", "FAILED", "TIMED_OUT"] as const;
export type PublicationStatus = (typeof PUBLICATION_STATUSES)[number];

/** Nothing more will happen without a client's action (TIMED_OUT can be resumed). */
export const isSettledPublication = (status: string | undefined) => status === "PUBLISHED" || status === "FAILED" || status === "TIMED_OUT";
/** Nothing more can happen at all. */
export const isFinalPublication = (status: string | undefined) => status === "PUBLISHED" || status === "FAILED";

/** Graph's caption limits; the sandbox and Dispatch's own check (and the form's counter) use them. */
export const CAPTION_LIMITS = { maxChars: 2200, maxHashtags: 30, maxMentions: 20 } as const;
export const MAX_CAPTION_CHARS = CAPTION_LIMITS.maxChars;
