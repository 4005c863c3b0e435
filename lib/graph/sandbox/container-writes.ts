import type { Redis } from "../../redis";
import { DAY_MS } from "./deps";
import { CONTAINER_TTL_SECONDS, isGraphId, keys, toHashArgs } from "./store";

/**
 * The container's writes that must be atomic, each one Lua script: creation within the account's
 * 24 h limit, taking over a stalled processor, its heartbeat and outcome, the start of an upload.
 */

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
