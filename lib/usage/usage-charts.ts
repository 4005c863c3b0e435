import { FINAL_JOB_STATUSES } from "../jobs/status";
import type { Histogram } from "./histogram";
import type { BucketUsage } from "./read-usage";
import { REEL_OUTCOMES } from "./usage-facts";
import type { UsageBucket } from "./usage-keys";
import { mergeAll, percentilesOf, usdOf } from "./usage-report";

/**
 * The Usage page's charts as plain data (the server reads the buckets, the browser draws them):
 * rows of one x value each, and the series stacked or set side by side on them. Colours are CSS
 * variables (app/globals.css), so each chart follows the light or dark theme.
 */

export interface ChartSeries {
  key: string;
  label: string;
  color: string;
  /** Series with the same stack are stacked; stacks, and series without one, stand side by side. */
  stack?: string;
}

export interface ChartData {
  /** Each row's `x` is its label on the x axis; the other keys are the series' values. */
  rows: ({ x: string } & Record<string, number | string>)[];
  series: ChartSeries[];
}

const palette = (i: number) => `var(--chart-${(i % 8) + 1})`;

const OUTCOME_COLORS: Record<string, string> = {
  COMPLETED: "var(--chart-ok)",
  PUBLISHED: "var(--chart-ok)",
  FAILED: "var(--chart-failed)",
  CANCELLED: "var(--chart-cancelled)",
};

/** "26 Nov 13:00" or "26 Nov": buckets are UTC hours and days. */
export function bucketLabel(start: number, bucket: UsageBucket): string {
  const date = new Date(start);
  const day = date.toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
  return bucket === "day" ? day : `${day} ${date.toISOString().slice(11, 16)}`;
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort((a, b) => a.localeCompare(b));

/** One series per model: its tokens (input and output) or its cost (USD) in each bucket. */
export function byModelOverTime(buckets: BucketUsage[], bucket: UsageBucket, measure: "tokens" | "cost"): ChartData {
  const models = sorted(buckets.flatMap((b) => b.jobs.map((c) => c.model)));
  const rows = buckets.map((b) => {
    const row: ChartData["rows"][number] = { x: bucketLabel(b.start, bucket) };
    for (const model of models) row[model] = 0;
    for (const c of b.jobs)
      row[c.model] = (row[c.model] as number) + (measure === "tokens" ? c.inputTokens + c.outputTokens : c.costNano);
    if (measure === "cost") for (const model of models) row[model] = usdOf(row[model] as number);
    return row;
  });
  return { rows, series: models.map((model, i) => ({ key: model, label: model, color: palette(i), stack: "all" })) };
}

/** Finished jobs in each bucket by final status. */
export function jobsByOutcome(buckets: BucketUsage[], bucket: UsageBucket): ChartData {
  const rows = buckets.map((b) => {
    const row: ChartData["rows"][number] = { x: bucketLabel(b.start, bucket) };
    for (const status of FINAL_JOB_STATUSES)
      row[status] = b.jobs.filter((c) => c.status === status).reduce((n, c) => n + c.jobs, 0);
    return row;
  });
  const series = FINAL_JOB_STATUSES.map((status) => ({
    key: status,
    label: status.toLowerCase(),
    color: OUTCOME_COLORS[status],
    stack: "all",
  }));
  return { rows, series };
}

/** p50 and p95 per model over the whole range (histograms merged, not averaged): time to first token or tokens per second. */
export function percentilesByModel(buckets: BucketUsage[], metric: "ttft" | "tps"): ChartData {
  const models = sorted(buckets.flatMap((b) => Object.keys(b[metric])));
  const rows = models.flatMap((model) => {
    const merged: Histogram = mergeAll(buckets.map((b) => b[metric][model]));
    const p = percentilesOf(merged);
    return p ? [{ x: model, p50: p.p50, p95: p.p95 }] : [];
  });
  return {
    rows,
    series: [
      { key: "p50", label: "p50", color: "var(--chart-1)" },
      { key: "p95", label: "p95", color: "var(--chart-3)" },
    ],
  };
}

/**
 * Publications published and failed per day (daily buckets), one series per account and outcome,
 * each account named as `names` says (its @username; an account no longer connected keeps its id).
 */
export function reelsPerDay(days: BucketUsage[], names: ReadonlyMap<string, string> = new Map()): ChartData {
  const accounts = sorted(days.flatMap((b) => b.reels.map((c) => c.accountId)));
  const outcomes = REEL_OUTCOMES.filter((o) => o !== "CANCELLED");
  const key = (account: string, outcome: string) => `${account} ${outcome.toLowerCase()}`;
  const rows = days.map((b) => {
    const row: ChartData["rows"][number] = { x: bucketLabel(b.start, "day") };
    for (const account of accounts) for (const outcome of outcomes) row[key(account, outcome)] = 0;
    for (const c of b.reels)
      if (c.status !== "CANCELLED")
        row[key(c.accountId, c.status)] = (row[key(c.accountId, c.status)] as number) + c.count;
    return row;
  });
  const series = accounts.flatMap((account, i) =>
    outcomes.map((outcome) => ({
      key: key(account, outcome),
      label: `${names.get(account) ?? account} ${outcome.toLowerCase()}`,
      // Each account its own stack (side by side): its colour for what it published, the failure colour on top.
      color: outcome === "PUBLISHED" ? palette(i) : OUTCOME_COLORS.FAILED,
      stack: account,
    })),
  );
  return { rows, series };
}

/** Whether a chart has anything to draw. */
export const hasData = (chart: ChartData) =>
  chart.rows.some((row) => chart.series.some((s) => typeof row[s.key] === "number" && (row[s.key] as number) > 0));
