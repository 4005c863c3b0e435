/**
 * Meta's caption limits for a REELS container (Content Publishing reference): dependency-free, so
 * the sandbox, Dispatch's own check at submit and the form's counter all read these.
 */

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
