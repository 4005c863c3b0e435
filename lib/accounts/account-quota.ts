import type { Redis } from "../redis";
import type { AccountQuota } from "./account";
import { connectedAccountKeys } from "./connected-accounts";
import type { PublishingLimit } from "../reels/graph-client";

/**
 * An account's publishing quota: Graph's content_publishing_limit cached briefly (the accounts list
 * reads it on every load), and Dispatch's own record of when it published, which says when the
 * moving window frees its next slot (Graph does not say).
 */

/** Short: usage changes with every publish, and the flow reads it fresh anyway. */
export const QUOTA_CACHE_S = 30;

export async function cacheQuota(redis: Redis, accountId: string, limit: PublishingLimit): Promise<void> {
  await redis.set(connectedAccountKeys.quota(accountId), JSON.stringify(limit), "EX", QUOTA_CACHE_S);
}

export async function cachedQuota(redis: Redis, accountId: string): Promise<AccountQuota | undefined> {
  const raw = await redis.get(connectedAccountKeys.quota(accountId));
  return raw ? (JSON.parse(raw) as AccountQuota) : undefined;
}

export async function recordPublished(
  redis: Redis,
  accountId: string,
  publicationId: string,
  now: number,
): Promise<void> {
  const key = connectedAccountKeys.published(accountId);
  await redis
    .multi()
    .zadd(key, now, publicationId)
    .zremrangebyscore(key, "-inf", now - 2 * 86_400_000)
    .pexpire(key, 2 * 86_400_000)
    .del(connectedAccountKeys.quota(accountId))
    .exec();
}

/**
 * When the window of `windowMs` frees a slot: the oldest publish Dispatch made in it, plus the
 * window. Without one (the posts were made elsewhere) an hour from now, to look again.
 */
export async function nextQuotaSlotAt(redis: Redis, accountId: string, windowMs: number, now: number): Promise<number> {
  const [, oldest] = await redis.zrangebyscore(
    connectedAccountKeys.published(accountId),
    now - windowMs,
    "+inf",
    "WITHSCORES",
    "LIMIT",
    0,
    1,
  );
  const frees = oldest === undefined ? now + Math.min(windowMs, 3_600_000) : Number(oldest) + windowMs;
  return Math.max(frees, now + 1000);
}
