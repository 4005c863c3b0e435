"use client";

import { useQuery } from "@tanstack/react-query";
import {
  INSIGHT_LABELS,
  REEL_INSIGHT_METRICS,
  type ReelInsightMetric,
  type ReelInsightsView,
} from "@/lib/graph/insights-metrics";
import { errorMessage } from "../api";
import { formatMs, formatNumber } from "../format";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Alert, Loading } from "../ui/states";
import { Time } from "../ui/time";
import { fetchInsights, reelKeys } from "./queries";

/** One metric as a person reads it: counts as numbers, the average watch time (ms from Graph) as a duration. */
export function formatInsight(metric: ReelInsightMetric, value: number | null | undefined): string {
  return metric === "ig_reels_avg_watch_time" ? formatMs(value) : formatNumber(value);
}

/**
 * How a published reel did, on its page. The server asks Graph at most every 15 minutes per reel;
 * asking the server each minute only picks up a reading someone else's view or the sweep made.
 */
export function ReelInsights({ publicationId }: { publicationId: string }) {
  const insights = useQuery({
    queryKey: reelKeys.insights(publicationId),
    queryFn: () => fetchInsights(publicationId),
    refetchInterval: 60_000,
  });
  return (
    <Card data-testid="reel-insights">
      <CardHeader title="Insights" description={<InsightsNote view={insights.data} />} />
      <CardBody>
        {insights.isPending ? (
          <Loading label="Loading insights…" />
        ) : insights.isError ? (
          <Alert title="Could not load the insights">{errorMessage(insights.error)}</Alert>
        ) : (
          <InsightsBody view={insights.data} />
        )}
      </CardBody>
    </Card>
  );
}

function InsightsNote({ view }: { view: ReelInsightsView | undefined }) {
  if (!view?.checked_at) return "From Instagram, once it has figures.";
  return (
    <>
      Checked <Time iso={view.checked_at} />
      {view.next_refresh_at && (
        <>
          ; again after <Time iso={view.next_refresh_at} />
        </>
      )}
    </>
  );
}

function InsightsBody({ view }: { view: ReelInsightsView }) {
  return (
    <div className="space-y-3">
      {view.status === "no-permission" && (
        <Alert tone="warning" title="Reconnect to allow insights">
          {view.message}{" "}
          <a className="font-medium underline" href="/dashboard/accounts">
            Go to Accounts
          </a>
        </Alert>
      )}
      {view.status === "failed" && (
        <Alert tone="warning" title="Could not read the latest insights">
          {view.message}
        </Alert>
      )}
      {view.metrics ? (
        <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4" data-testid="insight-values">
          {REEL_INSIGHT_METRICS.map((metric) => (
            <div key={metric} className="rounded-lg bg-zinc-50 px-3 py-2 dark:bg-zinc-800/60">
              <dt className="text-xs text-zinc-600 dark:text-zinc-400">{INSIGHT_LABELS[metric]}</dt>
              <dd className="text-lg font-semibold text-zinc-900 tabular-nums dark:text-zinc-100" data-metric={metric}>
                {formatInsight(metric, view.metrics?.[metric])}
              </dd>
            </div>
          ))}
        </dl>
      ) : (
        view.status !== "no-permission" && (
          <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="insights-pending">
            Not available yet: Instagram&apos;s figures for a new reel can take up to 48 hours to appear.
          </p>
        )
      )}
    </div>
  );
}
