import { randomBytes, randomInt } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import type { Redis } from "../../redis";
import { DAY_MS, type SandboxDeps } from "./deps";

/**
 * The sandbox's state, all in Redis under `sandbox:` so a web-server restart loses nothing.
 * State changes that must not race (create under the container limit, claim a stale container,
 * finish processing, publish under the quota) are single Lua scripts; publishing's are in
 * publish-store.ts.
 */

export const keys = {
  container: (id: string) => `sandbox:container:${id}`,
  media: (id: string) => `sandbox:media:${id}`,
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

const CREATE_CONTAINER = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], 86400000)
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[3], ARGV[5])
return 1`;

/** Stores a new container unless the account made `limit` containers in the last 24 h. */
export async function insertContainer(
  redis: Redis,
  record: { id: string; account_id: string; created_at: number } & Record<string, string | number | undefined>,
  limit: number,
): Promise<"created" | "limit" | "id-taken"> {
  const result = await redis.eval(
    CREATE_CONTAINER,
    3,
    keys.container(record.id),
    keys.accountContainers(record.account_id),
    keys.processing,
    record.created_at,
    record.created_at - DAY_MS,
    limit,
    CONTAINER_TTL_SECONDS,
    record.id,
    ...toHashArgs(record),
  );
  return result === 1 ? "created" : result === 0 ? "limit" : "id-taken";
}

const CLAIM_STALE = `
local c = redis.call('HMGET', KEYS[1], 'status_code', 'heartbeat_at', 'attempts', 'created_at')
if c[1] ~= 'IN_PROGRESS' then redis.call('SREM', KEYS[2], ARGV[5]) return 'settled' end
if tonumber(c[2] or '0') > tonumber(ARGV[2]) then return 'fresh' end
if tonumber(c[4] or '0') <= tonumber(ARGV[4]) then redis.call('SREM', KEYS[2], ARGV[5]) return 'expired' end
if tonumber(c[3] or '0') >= tonumber(ARGV[6]) then
  redis.call('HSET', KEYS[1], 'status_code', 'ERROR', 'status', ARGV[7], 'error_code', '-1', 'error_subcode', '2207001', 'owner', '')
  redis.call('SREM', KEYS[2], ARGV[5])
  return 'gave-up'
end
redis.call('HSET', KEYS[1], 'owner', ARGV[3], 'heartbeat_at', ARGV[1], 'processing_started_at', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return 'claimed'`;

export type ClaimResult = "claimed" | "fresh" | "settled" | "expired" | "gave-up";

/** Takes an IN_PROGRESS container over when its processor stopped beating (crashed or restarted). */
export async function claimStaleContainer(
  redis: Redis,
  id: string,
  opts: { now: number; owner: string; staleAfterMs: number; maxAttempts: number; gaveUpStatus: string },
): Promise<ClaimResult> {
  const result = await redis.eval(
    CLAIM_STALE,
    2,
    keys.container(id),
    keys.processing,
    opts.now,
    opts.now - opts.staleAfterMs,
    opts.owner,
    opts.now - DAY_MS,
    id,
    opts.maxAttempts,
    opts.gaveUpStatus,
  );
  return result as ClaimResult;
}

const HEARTBEAT = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'status_code') ~= 'IN_PROGRESS' then return 0 end
redis.call('HSET', KEYS[1], 'heartbeat_at', ARGV[2])
return 1`;

/** Refreshes the heartbeat; false when another attempt owns the container now. */
export async function beat(redis: Redis, id: string, owner: string, now: number): Promise<boolean> {
  return (await redis.eval(HEARTBEAT, 1, keys.container(id), owner, now)) === 1;
}

const FINISH = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'status_code') ~= 'IN_PROGRESS' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('SREM', KEYS[2], ARGV[2])
return 1`;

/** Records the outcome of processing if this attempt still owns the container. */
export async function finishProcessing(
  redis: Redis,
  id: string,
  owner: string,
  fields: Record<string, string | number | undefined>,
): Promise<boolean> {
  return (await redis.eval(FINISH, 2, keys.container(id), keys.processing, owner, id, ...toHashArgs(fields))) === 1;
}

/** A resumable container whose bytes (or file_url) have not arrived yet. */
export function awaitingUpload(container: ContainerRecord): boolean {
  return container.upload_type === "resumable" && !container.upload_file && !container.video_url;
}

const START_UPLOADED = `
if redis.call('HGET', KEYS[1], 'status_code') ~= 'IN_PROGRESS' then return 0 end
if (redis.call('HGET', KEYS[1], 'owner') or '') ~= '' then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'heartbeat_at', ARGV[2], 'processing_started_at', ARGV[2], 'attempts', 1, unpack(ARGV, 4))
redis.call('SADD', KEYS[2], ARGV[3])
return 1`;

/** Hands a resumable container its bytes (`upload_file`) or its `video_url` and makes `owner` its processor; false if it already has one. */
export async function startUploadedContainer(
  redis: Redis,
  id: string,
  owner: string,
  now: number,
  fields: { upload_file?: string; video_url?: string },
): Promise<boolean> {
  return (
    (await redis.eval(
      START_UPLOADED,
      2,
      keys.container(id),
      keys.processing,
      owner,
      now,
      id,
      ...toHashArgs(fields),
    )) === 1
  );
}

const SET_PROCESSING = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'processing_ms') else redis.call('HSET', KEYS[1], 'processing_ms', ARGV[1]) end
return 1`;

/** Sets (null: clears) how long an existing container's processing takes at least; false when there is no such container. */
export async function setContainerProcessingMs(
  redis: Redis,
  id: string,
  processingMs: number | null,
): Promise<boolean> {
  if (!isGraphId(id)) return false;
  return (
    (await redis.eval(SET_PROCESSING, 1, keys.container(id), processingMs === null ? "" : String(processingMs))) === 1
  );
}
