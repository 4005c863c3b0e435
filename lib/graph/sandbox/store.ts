import { randomBytes, randomInt } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import type { Redis } from "../../redis";
import { DAY_MS, type SandboxDeps } from "./deps";

/**
 * The sandbox's state, all in Redis under `sandbox:` so a web-server restart loses nothing.
 * State changes that must not race (create under the container limit, claim a stale container,
 * finish processing, publish under the quota) are single Lua scripts: the container's in
 * container-writes.ts, publishing's in publish-store.ts.
 */

export const keys = {
  container: (id: string) => `sandbox:container:${id}`,
  media: (id: string) => `sandbox:media:${id}`,
  /** Insights set through the control surface, by metric (media-insights.ts). */
  mediaInsights: (id: string) => `sandbox:media:${id}:insights`,
  shortcode: (code: string) => `sandbox:shortcode:${code}`,
  /** zset of container ids scored by creation time: the 400-per-24 h limit. */
  accountContainers: (accountId: string) => `sandbox:account:${accountId}:containers`,
  /** zset of media ids scored by publish time: the publishing quota and the account's media list. */
  accountPublished: (accountId: string) => `sandbox:account:${accountId}:published`,
  /** Containers that may still be IN_PROGRESS, for the start-up sweep. */
  processing: "sandbox:processing",
};

/**
 * Unpublished containers are kept a week so EXPIRED stays readable; a published one, its media
 * record and shortcode are kept for the sandbox's media lifetime (SandboxLimits.mediaTtlMs).
 */
export const CONTAINER_TTL_SECONDS = 7 * 24 * 60 * 60;

export type StoredStatusCode = "IN_PROGRESS" | "FINISHED" | "ERROR" | "PUBLISHED";
export type ContainerStatusCode = StoredStatusCode | "EXPIRED";

const num = z.coerce.number();
const optionalNum = z.preprocess((v) => (v === undefined || v === "" ? undefined : v), z.coerce.number().optional());

/** The further reel parameters as the create call sent them (reel-parameters.ts); "" when absent. Published, they go to the media. */
const reelFields = {
  cover_url: z.string().default(""),
  thumb_offset: z.string().default(""),
  audio_name: z.string().default(""),
  collaborators: z.string().default(""),
  location_id: z.string().default(""),
  user_tags: z.string().default(""),
  trial_params: z.string().default(""),
};

const containerRecordSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  media_type: z.string(),
  video_url: z.string(),
  caption: z.string().default(""),
  share_to_feed: z.enum(["true", "false"]).default("true"),
  created_at: num,
  status_code: z.enum(["IN_PROGRESS", "FINISHED", "ERROR", "PUBLISHED"]),
  status: z.string().default(""),
  error_code: optionalNum,
  error_subcode: optionalNum,
  owner: z.string().default(""),
  heartbeat_at: num.default(0),
  attempts: num.default(0),
  file: z.string().default(""),
  mime: z.string().default("video/mp4"),
  media_id: z.string().default(""),
  /** "resumable": created without a video_url; processing starts when the upload endpoint has all the bytes. */
  upload_type: z.string().default(""),
  /** The uploaded bytes (relative to videosDir) of a resumable container. */
  upload_file: z.string().default(""),
  /** How long processing takes at least, when set through the control surface; SANDBOX_PROCESSING_MS otherwise. */
  processing_ms: optionalNum,
  ...reelFields,
});

export type ContainerRecord = z.infer<typeof containerRecordSchema>;

const mediaRecordSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  container_id: z.string(),
  caption: z.string().default(""),
  share_to_feed: z.enum(["true", "false"]).default("true"),
  timestamp: num,
  shortcode: z.string(),
  file: z.string(),
  mime: z.string().default("video/mp4"),
  ...reelFields,
});

export type MediaRecord = z.infer<typeof mediaRecordSchema>;

export async function readContainerRecord(redis: Redis, id: string): Promise<ContainerRecord | undefined> {
  if (!isGraphId(id)) return undefined;
  const hash = await redis.hgetall(keys.container(id));
  const parsed = containerRecordSchema.safeParse(hash);
  return parsed.success ? parsed.data : undefined;
}

export async function readMediaRecord(redis: Redis, id: string): Promise<MediaRecord | undefined> {
  if (!isGraphId(id)) return undefined;
  const parsed = mediaRecordSchema.safeParse(await redis.hgetall(keys.media(id)));
  return parsed.success ? parsed.data : undefined;
}

/** What a reader sees: EXPIRED is derived from the clock, so it needs no timer. */
export function visibleStatusCode(container: ContainerRecord, now: number): ContainerStatusCode {
  const open = container.status_code === "IN_PROGRESS" || container.status_code === "FINISHED";
  return open && now >= container.created_at + DAY_MS ? "EXPIRED" : container.status_code;
}

/** Graph ids are decimal strings of 15-19 digits; the sandbox makes 17 like Instagram's. */
export function newGraphId(prefix: "178" | "179"): string {
  let digits = prefix;
  while (digits.length < 17) digits += String(randomInt(0, 10));
  return digits;
}

export function isGraphId(value: string): boolean {
  return /^\d{6,20}$/.test(value);
}

export function newShortcode(): string {
  return randomBytes(8).toString("base64url").slice(0, 11);
}

export function videosDir(deps: Pick<SandboxDeps, "config">): string {
  return path.resolve(deps.config.DATA_DIR, "sandbox", "videos");
}

/**
 * A video's absolute path from its `file` field (relative to videosDir). Data under DATA_DIR, never
 * code: the comment keeps Next's build from tracing the whole project into the server output.
 */
export function videoPath(deps: Pick<SandboxDeps, "config">, file: string): string {
  return path.join(/*turbopackIgnore: true*/ videosDir(deps), file);
}

/** Redis hashes hold strings; undefined fields are left out. */
export function toHashArgs(fields: Record<string, string | number | undefined>): string[] {
  return Object.entries(fields).flatMap(([k, v]) => (v === undefined ? [] : [k, String(v)]));
}

/** A resumable container whose bytes (or file_url) have not arrived yet. */
export function awaitingUpload(container: ContainerRecord): boolean {
  return container.upload_type === "resumable" && !container.upload_file && !container.video_url;
}
