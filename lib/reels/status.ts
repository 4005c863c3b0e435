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

/** Graph's caption limits; the sandbox and Dispatch's own check (and the form's counter) use them. */
export const CAPTION_LIMITS = { maxChars: 2200, maxHashtags: 30, maxMentions: 20 } as const;
export const MAX_CAPTION_CHARS = CAPTION_LIMITS.maxChars;

const HASHTAG = /(^|[^\p{L}\p{N}_&])#[\p{L}\p{N}_]+/gu;
const MENTION = /(^|[^\p{L}\p{N}_.])@[A-Za-z0-9._]+/gu;

/** What the limits count in a caption: characters (code points, as Graph counts them), #hashtags and @-mentions. */
export function countCaption(caption: string): { chars: number; hashtags: number; mentions: number } {
  return {
    chars: [...caption].length,
    hashtags: caption.match(HASHTAG)?.length ?? 0,
    mentions: caption.match(MENTION)?.length ?? 0,
  };
}
