import type { Redis } from "../redis";
import { emptyHistogram, mergeInto, percentile, type Histogram } from "./histogram";
import { readUsage, type BucketUsage, type JobCell, type ReelCell } from "./read-usage";
import { NANO_USD } from "./usage-facts";
import type { UsageGroup, UsageQuery } from "./usage-query";

/** p50 and p95 of a histogram; null when it is empty. */
export type Percentiles = { p50: number; p95: number } | null;

/** A bucket's (or a group's) jobs, as GET /v1/usage answers them. */
export interface JobsResult {
  object: "usage.jobs.result";
  model: string | null;
  status: string | null;
  jobs: number;
  input_tokens: number;
  output_tokens: number;
  cost: { currency: "USD"; amount: number };
  /** Null per status: the histograms are kept per model. */
  ttft_ms: Percentiles;
  tokens_per_second: Percentiles;
}

export interface ReelsResult {
  object: "usage.reels.result";
  account_id: string | null;
  published: number;
  failed: number;
  cancelled: number;
  submit_to_live_ms: Percentiles;
}

export type UsageResult = JobsResult | ReelsResult;

export interface UsageBucketResults {
  object: "bucket";
  /** Unix seconds, as OpenAI's usage API; end excluded. */
  start_time: number;
  end_time: number;
  results: UsageResult[];
}

export interface UsagePage {
  object: "page";
  bucket: UsageQuery["bucket"];
  group_by: UsageGroup | null;
  data: UsageBucketResults[];
  /** Every bucket of the range is in `data`: the range's limit keeps it one answer. */
  has_more: false;
  next_page: null;
}

/** GET /v1/usage: the tenant's buckets over the range, each with its results grouped as asked. */
export async function readUsagePage(redis: Redis, tenantId: string, query: UsageQuery): Promise<UsagePage> {
  const buckets = await readUsage(redis, tenantId, query);
  return {
    object: "page",
    bucket: query.bucket,
    group_by: query.groupBy ?? null,
    data: buckets.map((bucket) => ({
      object: "bucket",
      start_time: Math.floor(bucket.start / 1000),
      end_time: Math.floor(bucket.end / 1000),
      results: bucketResults(bucket, query.groupBy),
    })),
    has_more: false,
    next_page: null,
  };
}

export function bucketResults(bucket: BucketUsage, groupBy: UsageGroup | undefined): UsageResult[] {
  if (groupBy === "account") return reelsResults(bucket.reels, bucket.live, true);
  if (groupBy) return jobsResults(bucket.jobs, bucket, groupBy);
  return [...jobsResults(bucket.jobs, bucket, undefined), ...reelsResults(bucket.reels, bucket.live, false)];
}

function jobsResults(
  cells: JobCell[],
  histograms: Pick<BucketUsage, "ttft" | "tps">,
  groupBy: "model" | "status" | undefined,
): JobsResult[] {
  const groups = groupCells(cells, (cell) => (groupBy ? cell[groupBy] : ""));
  return [...groups].map(([name, group]) => {
    // The histograms are per model: a model's own, or every model's merged for the whole bucket.
    const percentilesBy = (byModel: Record<string, Histogram>) =>
      groupBy === "status"
        ? null
        : percentilesOf(mergeAll(groupBy === "model" ? [byModel[name]] : Object.values(byModel)));
    return {
      object: "usage.jobs.result",
      model: groupBy === "model" ? name : null,
      status: groupBy === "status" ? name : null,
      jobs: sum(group, (c) => c.jobs),
      input_tokens: sum(group, (c) => c.inputTokens),
      output_tokens: sum(group, (c) => c.outputTokens),
      cost: { currency: "USD", amount: usdOf(sum(group, (c) => c.costNano)) },
      ttft_ms: percentilesBy(histograms.ttft),
      tokens_per_second: percentilesBy(histograms.tps),
    };
  });
}

function reelsResults(cells: ReelCell[], live: Record<string, Histogram>, byAccount: boolean): ReelsResult[] {
  const groups = groupCells(cells, (cell) => (byAccount ? cell.accountId : ""));
  return [...groups].map(([account, group]) => {
    const count = (status: ReelCell["status"]) => sum(group, (c) => (c.status === status ? c.count : 0));
    return {
      object: "usage.reels.result",
      account_id: byAccount ? account : null,
      published: count("PUBLISHED"),
      failed: count("FAILED"),
      cancelled: count("CANCELLED"),
      submit_to_live_ms: percentilesOf(mergeAll(byAccount ? [live[account]] : Object.values(live))),
    };
  });
}

function groupCells<T>(cells: T[], nameOf: (cell: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const cell of [...cells].sort((a, b) => nameOf(a).localeCompare(nameOf(b)))) {
    const name = nameOf(cell);
    groups.set(name, [...(groups.get(name) ?? []), cell]);
  }
  return groups;
}

const sum = <T>(items: T[], of: (item: T) => number) => items.reduce((total, item) => total + of(item), 0);

/** Dollars to the nano-dollar the counters hold. */
export const usdOf = (nano: number) => Number((nano / NANO_USD).toFixed(9));

export function mergeAll(histograms: (Histogram | undefined)[]): Histogram {
  return histograms.reduce<Histogram>((merged, h) => (h ? mergeInto(merged, h) : merged), emptyHistogram());
}

/** p50 and p95 to three significant figures: as precise as a bucket is. */
export function percentilesOf(histogram: Histogram): Percentiles {
  const p50 = percentile(histogram, 0.5);
  const p95 = percentile(histogram, 0.95);
  return p50 === null || p95 === null ? null : { p50: round3(p50), p95: round3(p95) };
}

const round3 = (value: number) => Number(value.toPrecision(3));
