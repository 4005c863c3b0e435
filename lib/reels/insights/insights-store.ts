import { z } from "zod";
import { parseHashRecord } from "../../hash-record";
import type { Redis } from "../../redis";
import { INSIGHTS_STATUSES, REEL_INSIGHT_METRICS, type InsightValues } from "../../graph/insights-metrics";
import { SWEEP_WINDOW_MS } from "./refresh-policy";

/**
 * Each published reel's insights, cached in Redis so a dashboard's views and the daily sweep share
 * one reading, and Graph is asked at the pace refresh-policy.ts allows:
 *   reel:insights:{media-id}               the reel and its last reading (a hash, below)
 *   reels:insights:recent                  media ids by publish time (ms): the sweep's last 30 days
 *   reel:account:{account-id}:insights     the same per account: its insights table
 */
export const insightsKeys = {
  reel: (mediaId: string) => `reel:insights:${mediaId}`,
  recent: "reels:insights:recent",
  account: (accountId: string) => `reel:account:${accountId}:insights`,
};

/** A reading outlives the sweep's 30 days: the account's table keeps showing older reels' last figures. */
export const INSIGHTS_TTL_MS = 90 * 86_400_000;
/** An account's table lists at most this many reels, the newest. */
export const ACCOUNT_TABLE_MAX = 500;

const ms = z.coerce.number().int().default(0);
const text = z.string().default("");

const storedValues = z.preprocess(
  (raw) => {
    if (typeof raw !== "string" || raw === "") return null;
    try {
      return JSON.parse(raw);
    } catch {
      return null;
    }
  },
  z.partialRecord(z.enum(REEL_INSIGHT_METRICS), z.number()).nullable().catch(null),
);

/** The hash at reel:insights:{media-id}, declared once. */
export const insightsRecordSchema = z.object({
  media_id: z.string().min(1),
  publication_id: z.string(),
  tenant_id: z.string(),
  account_id: z.string(),
  caption: text,
  permalink: text,
  published_at: ms,
  /** The last reading's status; "" before the first. */
  status: z.enum(INSIGHTS_STATUSES).catch("not-fetched"),
  values: storedValues,
  /** When `values` were read (ms); 0 before. */
  fetched_at: ms,
  /** When Graph was last asked, or claimed to be (ms); 0 before. */
  attempted_at: ms,
  message: text,
});
export type InsightsRecord = z.infer<typeof insightsRecordSchema>;
export type InsightsHash = Partial<Record<keyof InsightsRecord, string>>;

export interface PublishedReel {
  mediaId: string;
  publicationId: string;
  tenantId: string;
  accountId: string;
  caption: string;
  permalink: string | null;
  publishedAt: number;
}

/**
 * Records a reel as published, so its insights are read on view and swept daily. Idempotent: a
 * second call (a redelivered publish, a view of a reel published before this existed) keeps the
 * reading already there.
 */
export async function registerPublishedReel(redis: Redis, reel: PublishedReel, now: number): Promise<void> {
  const key = insightsKeys.reel(reel.mediaId);
  const fields: InsightsHash = {
    media_id: reel.mediaId,
    publication_id: reel.publicationId,
    tenant_id: reel.tenantId,
    account_id: reel.accountId,
    caption: reel.caption,
    permalink: reel.permalink ?? "",
    published_at: String(reel.publishedAt),
  };
  const accountKey = insightsKeys.account(reel.accountId);
  await redis
    .multi()
    .hset(key, fields)
    .pexpire(key, INSIGHTS_TTL_MS)
    .zadd(insightsKeys.recent, reel.publishedAt, reel.mediaId)
    .zremrangebyscore(insightsKeys.recent, "-inf", `(${now - SWEEP_WINDOW_MS}`)
    .pexpire(insightsKeys.recent, SWEEP_WINDOW_MS)
    .zadd(accountKey, reel.publishedAt, reel.mediaId)
    .zremrangebyscore(accountKey, "-inf", `(${now - INSIGHTS_TTL_MS}`)
    .zremrangebyrank(accountKey, 0, -(ACCOUNT_TABLE_MAX + 1))
    .pexpire(accountKey, INSIGHTS_TTL_MS)
    .exec();
}

export async function readInsightsRecord(redis: Redis, mediaId: string): Promise<InsightsRecord | undefined> {
  return parseHashRecord(insightsRecordSchema, "media_id", await redis.hgetall(insightsKeys.reel(mediaId)));
}

/** Writes a reading's outcome, unless the record expired meanwhile (a reading never resurrects one). */
export async function writeReading(
  redis: Redis,
  mediaId: string,
  reading: { status: InsightsRecord["status"]; values?: InsightValues; fetchedAt?: number; message?: string },
): Promise<void> {
  const fields: InsightsHash = { status: reading.status, message: reading.message ?? "" };
  if (reading.values) fields.values = JSON.stringify(reading.values);
  if (reading.fetchedAt !== undefined) fields.fetched_at = String(reading.fetchedAt);
  await redis.eval(WRITE_IF_EXISTS, 1, insightsKeys.reel(mediaId), ...Object.entries(fields).flat());
}

const WRITE_IF_EXISTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`;

// Sets attempted_at to ARGV[2] only if it still holds ARGV[1] ("" for none): of two views (or a
// view and the sweep) that both found a reading due, one asks Graph.
const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if (redis.call('HGET', KEYS[1], 'attempted_at') or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'attempted_at', ARGV[2])
return 1`;

/**
 * Takes the right to ask Graph now for a reel whose reading `readingDue` found due, as the record
 * was read (`attemptedAt`); false when someone else took it since.
 */
export async function claimReading(redis: Redis, record: InsightsRecord, now: number): Promise<boolean> {
  const expected = record.attempted_at > 0 ? String(record.attempted_at) : "";
  return (await redis.eval(CLAIM, 1, insightsKeys.reel(record.media_id), expected, now)) === 1;
}
