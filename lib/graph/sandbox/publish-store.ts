import type { Redis } from "../../redis";
import { DAY_MS } from "./deps";
import { keys, newGraphId, newShortcode } from "./store";
import { REEL_PARAMETER_NAMES } from "../reel-parameter-limits";

/** A container's publication in the sandbox's Redis state (store.ts): one script, so two publishes cannot both win. */

const PUBLISH = `
local c = redis.call('HMGET', KEYS[1], 'account_id', 'status_code', 'created_at', 'media_id', 'file', 'mime', 'caption', 'share_to_feed')
if not c[1] or c[1] ~= ARGV[4] then return {'not-found'} end
if c[2] == 'PUBLISHED' then return {'published', c[4]} end
if c[2] ~= 'FINISHED' then return {'not-ready', c[2]} end
if tonumber(c[3]) + tonumber(ARGV[6]) <= tonumber(ARGV[1]) then return {'expired'} end
if redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[2], '+inf') >= tonumber(ARGV[3]) then return {'quota'} end
redis.call('HSET', KEYS[1], 'status_code', 'PUBLISHED', 'media_id', ARGV[5], 'published_at', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[9]))
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
redis.call('HSET', KEYS[3], 'id', ARGV[5], 'account_id', ARGV[4], 'container_id', ARGV[8], 'caption', c[7] or '',
  'share_to_feed', c[8] or 'true', 'timestamp', ARGV[1], 'shortcode', ARGV[7], 'file', c[5], 'mime', c[6] or 'video/mp4')
for i = 10, #ARGV do
  local value = redis.call('HGET', KEYS[1], ARGV[i])
  if value then redis.call('HSET', KEYS[3], ARGV[i], value) end
end
redis.call('PEXPIRE', KEYS[3], ARGV[9])
redis.call('SET', KEYS[4], ARGV[5], 'PX', ARGV[9])
return {'published-now', ARGV[5]}`;

export type PublishResult =
  | { kind: "published-now"; mediaId: string }
  | { kind: "published"; mediaId: string }
  | { kind: "not-found" }
  | { kind: "not-ready"; statusCode: string }
  | { kind: "expired" }
  | { kind: "quota" };

/** Publishes a FINISHED container under the moving-24 h quota; one script, so two publishes cannot both win. */
export async function publishContainerRecord(
  redis: Redis,
  opts: { containerId: string; accountId: string; now: number; quota: number; mediaTtlMs: number },
): Promise<PublishResult> {
  const mediaId = newGraphId("178");
  const shortcode = newShortcode();
  const [kind, value] = (await redis.eval(
    PUBLISH,
    4,
    keys.container(opts.containerId),
    keys.accountPublished(opts.accountId),
    keys.media(mediaId),
    keys.shortcode(shortcode),
    opts.now,
    opts.now - DAY_MS,
    opts.quota,
    opts.accountId,
    mediaId,
    DAY_MS,
    shortcode,
    opts.containerId,
    opts.mediaTtlMs,
    // The further reel parameters go with the reel (ARGV[10] on).
    ...REEL_PARAMETER_NAMES,
  )) as [string, string | undefined];
  switch (kind) {
    case "published-now":
    case "published":
      return { kind, mediaId: value ?? "" };
    case "not-ready":
      return { kind, statusCode: value ?? "" };
    case "expired":
    case "quota":
    case "not-found":
      return { kind };
    default:
      throw new Error(`unexpected publish result ${kind}`);
  }
}

/** Posts published in the moving 24 h window ending now, or since `sinceMs` when that is later. */
export async function countPublishedSince(
  redis: Redis,
  accountId: string,
  now: number,
  sinceMs?: number,
): Promise<number> {
  const windowStart = now - DAY_MS;
  const from = sinceMs !== undefined && sinceMs > windowStart ? `${sinceMs}` : `(${windowStart}`;
  return redis.zcount(keys.accountPublished(accountId), from, "+inf");
}
