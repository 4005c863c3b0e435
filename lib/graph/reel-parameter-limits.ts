import { REEL_SPEC } from "../video/reel-spec";

/**
 * The rules of Meta's further REELS container parameters that the dashboard needs too: plain
 * values, no zod, so a client component imports them without the schemas (reel-parameters.ts).
 */

/** In the order Dispatch stores and sends them. */
export const REEL_PARAMETER_NAMES = [
  "cover_url",
  "thumb_offset",
  "audio_name",
  "collaborators",
  "location_id",
  "user_tags",
  "trial_params",
] as const;
export type ReelParameterName = (typeof REEL_PARAMETER_NAMES)[number];

export const REEL_PARAMETER_LIMITS = {
  maxCollaborators: 3,
  /** Graph refuses more than 20 tags on one media. */
  maxUserTags: 20,
  maxAudioNameChars: 100,
  maxCoverUrlChars: 2048,
  /** cover_url: a JPEG of at most 8 MB. */
  maxCoverBytes: 8 * 1024 * 1024,
  /** thumb_offset must fall inside the video, and no reel is longer than this. */
  maxThumbOffsetMs: REEL_SPEC.maxDurationSeconds * 1000,
} as const;

/** trial_params.graduation_strategy: MANUAL graduates from the Instagram app, SS_PERFORMANCE by itself when it performs well. */
export const GRADUATION_STRATEGIES = ["MANUAL", "SS_PERFORMANCE"] as const;
