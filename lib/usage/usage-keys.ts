/**
 * Where the usage aggregates live and for how long: one hash per tenant, kind and time bucket
 * (hours and days, UTC), each field a counter. Jobs and reels have hashes of their own, so the jobs'
 * can be rebuilt from the audit topic without touching the reels'.
 */

export const USAGE_BUCKETS = ["hour", "day"] as const;
export type UsageBucket = (typeof USAGE_BUCKETS)[number];

export const USAGE_KINDS = ["jobs", "reels"] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

export const BUCKET_MS: Record<UsageBucket, number> = { hour: 3_600_000, day: 86_400_000 };

/**
 * How long a bucket is kept after it starts: hours for 35 days (a 31-day range of hourly points,
 * with room), days for 400 (13 months and some).
 */
export const RETENTION_MS: Record<UsageBucket, number> = { hour: 35 * 86_400_000, day: 400 * 86_400_000 };

/** The longest range one request may ask for, per bucket: 744 hourly or 400 daily points. */
export const MAX_RANGE_MS: Record<UsageBucket, number> = { hour: 31 * 86_400_000, day: 400 * 86_400_000 };

export const usageKeys = {
  /** The counters of one tenant's `kind` in the bucket starting at `startMs`. */
  bucket: (kind: UsageKind, tenantId: string, bucket: UsageBucket, startMs: number) =>
    `usage:${kind}:${tenantId}:${bucket}:${Math.floor(startMs / 1000)}`,
  /** Every bucket of a kind, for the rebuild's SCAN. */
  pattern: (kind: UsageKind) => `usage:${kind}:*`,
  /** Counts made and not yet added to their buckets (record-usage.ts: each entry one record's tallies). */
  pending: "usage:pending",
};

/** The start (ms) of the UTC hour or day `ms` falls in. */
export const bucketStart = (ms: number, bucket: UsageBucket): number =>
  ms - (((ms % BUCKET_MS[bucket]) + BUCKET_MS[bucket]) % BUCKET_MS[bucket]);

/** The starts of every bucket that overlaps [fromMs, toMs). */
export function bucketStarts(fromMs: number, toMs: number, bucket: UsageBucket): number[] {
  const starts: number[] = [];
  for (let start = bucketStart(fromMs, bucket); start < toMs; start += BUCKET_MS[bucket]) starts.push(start);
  return starts;
}
