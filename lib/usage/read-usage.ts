import type { Redis } from "../redis";
import { FINAL_JOB_STATUSES, type FinalJobStatus } from "../jobs/status";
import { emptyHistogram, HISTOGRAM_BUCKETS, type Histogram } from "./histogram";
import { isReelOutcome, type ReelOutcome } from "./usage-facts";
import { BUCKET_MS, bucketStarts, usageKeys, type UsageBucket } from "./usage-keys";
import { foldUsage } from "./fold-usage";

/** One model's jobs of one final status in a bucket. */
export interface JobCell {
  model: string;
  status: FinalJobStatus;
  jobs: number;
  inputTokens: number;
  outputTokens: number;
  /** USD × 10⁹ (see NANO_USD). */
  costNano: number;
}

/** One account's publications that reached one final status in a bucket. */
export interface ReelCell {
  accountId: string;
  status: ReelOutcome;
  count: number;
}

/** A bucket's aggregates as read, plain data (the dashboard's charts get it as props). */
export interface BucketUsage {
  /** ms, UTC; `end` is excluded. */
  start: number;
  end: number;
  jobs: JobCell[];
  /** Time to first token (ms) and tokens per second, by model. */
  ttft: Record<string, Histogram>;
  tps: Record<string, Histogram>;
  reels: ReelCell[];
  /** Submit (or publish_at) to live (ms), by account. */
  live: Record<string, Histogram>;
}

export interface UsageRange {
  fromMs: number;
  toMs: number;
  bucket: UsageBucket;
}

/** A tenant's buckets overlapping [from, to), in time order, with the empty ones: the pending counts folded, then one pipeline of HGETALLs. */
export async function readUsage(redis: Redis, tenantId: string, range: UsageRange): Promise<BucketUsage[]> {
  // Counts made since the workers' last fold are added first: a job finished a moment ago shows.
  await foldUsage(redis);
  const starts = bucketStarts(range.fromMs, range.toMs, range.bucket);
  const pipeline = redis.pipeline();
  for (const start of starts) {
    pipeline.hgetall(usageKeys.bucket("jobs", tenantId, range.bucket, start));
    pipeline.hgetall(usageKeys.bucket("reels", tenantId, range.bucket, start));
  }
  const replies = (await pipeline.exec()) ?? [];
  return starts.map((start, i) => {
    const hashes = [replies[2 * i], replies[2 * i + 1]].map(([error, hash]) => {
      if (error) throw error;
      return (hash ?? {}) as Record<string, string>;
    });
    return parseBucket(start, start + BUCKET_MS[range.bucket], hashes[0], hashes[1]);
  });
}

/** Reads the counters of one bucket's two hashes (fields as usage-facts.ts writes them); a field it does not know is skipped. */
export function parseBucket(
  start: number,
  end: number,
  jobsHash: Record<string, string>,
  reelsHash: Record<string, string>,
): BucketUsage {
  const bucket: BucketUsage = { start, end, jobs: [], ttft: {}, tps: {}, reels: [], live: {} };
  const cells = new Map<string, JobCell>();
  for (const [kind, name, detail, value] of fieldsOf(jobsHash)) {
    if (kind === "ttft" || kind === "tps") addToHistogram(bucket[kind], name, detail, value);
    else if (isJobCounter(kind) && isFinalStatus(detail)) {
      const key = JSON.stringify([name, detail]);
      let cell = cells.get(key);
      if (!cell)
        cells.set(key, (cell = { model: name, status: detail, jobs: 0, inputTokens: 0, outputTokens: 0, costNano: 0 }));
      cell[JOB_COUNTERS[kind]] += value;
    }
  }
  bucket.jobs = [...cells.values()];
  for (const [kind, name, detail, value] of fieldsOf(reelsHash)) {
    if (kind === "live") addToHistogram(bucket.live, name, detail, value);
    else if (kind === "reels" && isReelOutcome(detail))
      bucket.reels.push({ accountId: name, status: detail, count: value });
  }
  return bucket;
}

const JOB_COUNTERS = { jobs: "jobs", in: "inputTokens", out: "outputTokens", cost: "costNano" } as const;
const isJobCounter = (kind: string): kind is keyof typeof JOB_COUNTERS => Object.hasOwn(JOB_COUNTERS, kind);
const isFinalStatus = (status: string): status is FinalJobStatus =>
  (FINAL_JOB_STATUSES as readonly string[]).includes(status);

function* fieldsOf(hash: Record<string, string>): Generator<[string, string, string, number]> {
  for (const [field, raw] of Object.entries(hash)) {
    let parts: unknown;
    try {
      parts = JSON.parse(field);
    } catch {
      continue;
    }
    const value = Number(raw);
    if (!Array.isArray(parts) || parts.length !== 3 || !Number.isFinite(value)) continue;
    yield [String(parts[0]), String(parts[1]), String(parts[2]), value];
  }
}

function addToHistogram(byName: Record<string, Histogram>, name: string, index: string, count: number): void {
  const i = Number(index);
  if (!Number.isInteger(i) || i < 0 || i >= HISTOGRAM_BUCKETS) return;
  (byName[name] ??= emptyHistogram())[i] += count;
}
