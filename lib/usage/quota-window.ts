import type { AccountQuota, AccountView } from "../accounts/account";
import { PUBLISHED_KEPT_MS, publishTimes } from "../accounts/account-quota";
import { listAccountViews } from "../accounts/account-view";
import type { AccountDeps } from "../accounts/connect-account";
import { bucketLabel, type ChartData } from "./usage-charts";

/**
 * Each account's publishing quota over the last day, for the Usage page: how many reels Dispatch
 * published through it in the moving window (Graph's content_publishing_limit counts 24 h), read
 * every whole hour and now, beside the limit and Graph's own count. Graph counts posts made outside
 * Dispatch too; Dispatch's line knows only its own (account-quota.ts records them).
 */

const HOUR_MS = 3_600_000;
/** What the chart looks back over; with a window of at most as long, the record kept (PUBLISHED_KEPT_MS) covers every sample. */
export const QUOTA_SPAN_MS = 24 * HOUR_MS;

export interface QuotaSample {
  /** The moment counted at (ms): a whole hour, or now for the last. */
  at: number;
  /** Reels published in the window ending then: after at − window, up to at. */
  published: number;
}

export interface AccountQuotaWindow {
  accountId: string;
  /** "@username", else its label, else its id. */
  name: string;
  /** The moving window the limit counts over (ms): Graph's quota_duration, 24 h when Graph did not say. */
  windowMs: number;
  /** Oldest first; the last is now. */
  samples: QuotaSample[];
  /** Graph's figures, as cached or read now (quota_usage includes posts made outside Dispatch); null where unknown. */
  graph: AccountQuota;
}

/** Every whole hour (UTC) after now − span, then now. */
export function hourlySampleTimes(now: number, spanMs = QUOTA_SPAN_MS): number[] {
  const times: number[] = [];
  for (let at = Math.floor((now - spanMs) / HOUR_MS + 1) * HOUR_MS; at < now; at += HOUR_MS) times.push(at);
  times.push(now);
  return times;
}

/**
 * The moving-window count at each sample time: the publishes after at − window and up to at. A
 * publish leaves the window `windowMs` after it was made, when its slot is free again (as
 * account-quota.ts's nextQuotaSlotAt says).
 */
export function movingWindowCounts(
  publishedAt: readonly number[],
  sampleTimes: readonly number[],
  windowMs: number,
): QuotaSample[] {
  return sampleTimes.map((at) => ({
    at,
    published: publishedAt.filter((p) => p > at - windowMs && p <= at).length,
  }));
}

/** The window Graph said (seconds), capped at what the kept record can cover over the span; 24 h when unknown. */
export function quotaWindowMs(quota: AccountQuota): number {
  const said = quota.quota_duration && quota.quota_duration > 0 ? quota.quota_duration * 1000 : QUOTA_SPAN_MS;
  return Math.min(said, PUBLISHED_KEPT_MS - QUOTA_SPAN_MS);
}

/** The tenant's accounts, each with its moving-window counts over the last day and Graph's figures. */
export async function readQuotaWindows(
  deps: AccountDeps,
  tenantId: string,
  now: number,
  signal?: AbortSignal,
): Promise<AccountQuotaWindow[]> {
  const views = await listAccountViews(deps, tenantId, signal);
  return Promise.all(views.map((view) => readQuotaWindow(deps, view, now)));
}

async function readQuotaWindow(deps: AccountDeps, view: AccountView, now: number): Promise<AccountQuotaWindow> {
  const windowMs = quotaWindowMs(view.quota);
  const times = hourlySampleTimes(now);
  const published = await publishTimes(deps.redis, view.account_id, times[0] - windowMs, now);
  return {
    accountId: view.account_id,
    name: view.username ? `@${view.username}` : (view.label ?? view.account_id),
    windowMs,
    samples: movingWindowCounts(published, times, windowMs),
    graph: view.quota,
  };
}

/** The chart's rows: "26 Nov 13:00", …, "Now, 26 Nov 13:42" (UTC), with the count and, when Graph said it, the limit. */
export function quotaChartData(quota: AccountQuotaWindow): ChartData {
  const limit = quota.graph.quota_total;
  const last = quota.samples.length - 1;
  const rows = quota.samples.map(({ at, published }, i) => {
    const row: ChartData["rows"][number] = { x: `${i === last ? "Now, " : ""}${bucketLabel(at, "hour")}`, published };
    if (limit !== null) row.limit = limit;
    return row;
  });
  const series = [{ key: "published", label: "Published through Dispatch", color: "var(--chart-1)" }];
  if (limit !== null) series.push({ key: "limit", label: "Limit", color: "var(--chart-failed)" });
  return { rows, series };
}

/** Whether Dispatch published through the account at all in the span's windows. */
export const publishedInSpan = (quota: AccountQuotaWindow) => quota.samples.some((s) => s.published > 0);
