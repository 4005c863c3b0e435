import type { Redis } from "../redis";
import type { AccountQuota } from "./account";
import { connectedAccountKeys } from "./connected-accounts";
import type { PublishingLimit } from "../graph/client";

/**
 * An account's publishing quota: Graph's content_publishing_limit cached briefly (the accounts list
 * reads it on every load), and Dispatch's own record of when it published, which says when the
 * moving window frees its next slot (Graph does not say).
 */

/** Short: usage changes with every publish, and the flow reads it fresh anyway. */
export const QUOTA_CACHE_S = 30;

/** How long the record of the account's publishes is kept: a day's moving window, looked back on over a day. */
export const PUBLISHED_KEPT_MS = 2 * 86_400_000;

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
    .zremrangebyscore(key, "-inf", now - PUBLISHED_KEPT_MS)
    .pexpire(key, PUBLISHED_KEPT_MS)
    .del(connectedAccountKeys.quota(accountId))
    .exec();
}

/** When Dispatch published through the account after `since` and up to `until` (ms), oldest first. */
export async function publishTimes(redis: Redis, accountId: string, since: number, until: number): Promise<number[]> {
  const flat = await redis.zrangebyscore(connectedAccountKeys.published(accountId), `(${since}`, until, "WITHSCORES");
  return flat.filter((_, i) => i % 2 === 1).map(Number);
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
