import type { Producer } from "kafkajs";
import { z } from "zod";
import { validationError } from "../errors";
import { UPLOAD_ID } from "../uploads/upload-store";
import { CAPTION_LIMITS, countCaption } from "../graph/caption-limits";
import { traceHeaders } from "../tracing";
import { TOPICS } from "../topics";
import { reelParametersShape } from "../graph/reel-parameters";

/** What a client sends to publish a reel or change a scheduled one, and what the worker gets on the log. */

export const MAX_VIDEO_URL_CHARS = 2048;
/** Graph's scheduling window. */
export const MAX_SCHEDULE_AHEAD_DAYS = 75;

/** Graph's caption limits, checked here so a caption Graph would refuse is a 422 now rather than a failed publication later. */
const captionSchema = z.string().superRefine((caption, ctx) => {
  const { chars, hashtags, mentions } = countCaption(caption);
  if (chars > CAPTION_LIMITS.maxChars)
    ctx.addIssue({ code: "custom", message: `at most ${CAPTION_LIMITS.maxChars} characters` });
  if (hashtags > CAPTION_LIMITS.maxHashtags)
    ctx.addIssue({ code: "custom", message: `at most ${CAPTION_LIMITS.maxHashtags} hashtags` });
  if (mentions > CAPTION_LIMITS.maxMentions)
    ctx.addIssue({ code: "custom", message: `at most ${CAPTION_LIMITS.maxMentions} @-mentions` });
});
const publishAtSchema = z.iso.datetime({
  offset: true,
  message: "must be an ISO 8601 date-time with a time zone, e.g. 2030-01-01T09:00:00Z",
});

export const publicationInputSchema = z
  .strictObject({
    account_id: z.string().min(1).max(64),
    video_url: z
      .string()
      .max(MAX_VIDEO_URL_CHARS, `at most ${MAX_VIDEO_URL_CHARS} characters`)
      .pipe(z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }))
      .optional(),
    /** A video uploaded through POST /api/uploads, in place of video_url. */
    upload_id: z.string().regex(UPLOAD_ID, "must be an upload_id from POST /api/uploads").optional(),
    caption: captionSchema.optional(),
    share_to_feed: z.boolean().default(true),
    publish_at: publishAtSchema.optional(),
    /** cover_url, thumb_offset, audio_name, collaborators, location_id, user_tags, trial_params (reel-parameters.ts). */
    ...reelParametersShape,
  })
  .superRefine((input, ctx) => {
    if ((input.video_url === undefined) === (input.upload_id === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [input.video_url === undefined ? "video_url" : "upload_id"],
        message: "send exactly one of video_url and upload_id",
      });
    }
  });

export type PublicationInput = z.infer<typeof publicationInputSchema>;

/** PATCH of a scheduled publication: a new time, a new caption, or both. */
export const publicationUpdateSchema = z
  .strictObject({ publish_at: publishAtSchema.optional(), caption: captionSchema.optional() })
  .refine((update) => update.publish_at !== undefined || update.caption !== undefined, {
    message: "send publish_at, caption or both",
  });

export type PublicationUpdate = z.infer<typeof publicationUpdateSchema>;

/** publish_at must be ahead of now and within the scheduling window; a 422 naming publish_at otherwise. */
export function parsePublishAt(value: string, now: Date): Date {
  const at = new Date(value);
  const problem =
    at.getTime() <= now.getTime()
      ? "must be in the future"
      : at.getTime() > now.getTime() + MAX_SCHEDULE_AHEAD_DAYS * 86400_000
        ? `must be at most ${MAX_SCHEDULE_AHEAD_DAYS} days ahead`
        : undefined;
  if (problem) throw validationError([{ path: "publish_at", message: problem }]);
  return at;
}

/** What the worker gets on reels.publish.requests: an id to act on; Redis holds the rest. */
export const publicationMessageSchema = z.object({
  publication_id: z.uuid(),
  tenant_id: z.string().min(1),
  account_id: z.string().min(1),
});
export type PublicationMessage = z.infer<typeof publicationMessageSchema>;

/** The request as a record on reels.publish.requests, keyed by account so an account's publications start in order. */
export function publicationRequestRecord(message: PublicationMessage): {
  key: string;
  value: string;
  headers: Record<string, string>;
} {
  // traceparent: the publication's trace goes on in the worker (empty when nothing is traced).
  return {
    key: message.account_id,
    value: JSON.stringify(message),
    headers: { "content-type": "application/json", ...traceHeaders() },
  };
}

/**
 * Sends publications to be run: the one way reel work reaches reels.publish.requests once a
 * publication exists (a retry, a resume, the schedule's due ones), each record with its trace
 * context as the submit's has. A retry that built its record by hand lost the trace.
 */
export async function sendPublicationRequests(producer: Producer, messages: PublicationMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await producer.send({ topic: TOPICS.reels.name, acks: -1, messages: messages.map(publicationRequestRecord) });
}
