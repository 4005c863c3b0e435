import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { Alert } from "@/components/ui/states";
import { ChartCard } from "@/components/usage/chart-card";
import { QuotaCards } from "@/components/usage/quota-cards";
import { RangePicker } from "@/components/usage/range-picker";
import { readQuotaWindows } from "@/lib/usage/quota-window";
import { readUsage } from "@/lib/usage/read-usage";
import { byModelOverTime, jobsByOutcome, percentilesByModel, reelsPerDay } from "@/lib/usage/usage-charts";
import { pickUsageRange } from "@/lib/usage/usage-range";
import { getServices } from "@/lib/web/services";
import { sessionTenant } from "../../../session-tenant";

export const metadata: Metadata = { title: "Usage" };
export const dynamic = "force-dynamic";

type SearchParams = Record<string, string | string[] | undefined>;

/**
 * The range asked for, its buckets and the same range by the day (reels are drawn per day), and
 * each account's publishing quota over the last 24 h, read at request time.
 */
async function readPageUsage(params: SearchParams) {
  const tenant = (await sessionTenant()) ?? "";
  const now = Date.now();
  const range = pickUsageRange(params, now);
  const { redis, accounts, graphs, config } = getServices();
  const [buckets, days, quota] = await Promise.all([
    readUsage(redis, tenant, range),
    range.bucket === "day" ? undefined : readUsage(redis, tenant, { ...range, bucket: "day" }),
    readQuotaWindows({ redis, accounts, graphs, sandbox: config.GRAPH_SANDBOX }, tenant, now),
  ]);
  return { range, buckets, days: days ?? buckets, quota };
}

export default async function UsagePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { range, buckets, days, quota } = await readPageUsage(await searchParams);
  const rowHeader = range.bucket === "hour" ? "Hour (UTC)" : "Day (UTC)";
  const per = range.bucket === "hour" ? "hour" : "day";
  return (
    <>
      <PageHeader
        title="Usage"
        description="What your jobs used and how fast they ran, and how your reels did: kept 13 months, after the jobs themselves expire. Below, each account's publishing quota."
        actions={<RangePicker range={range} />}
      />
      {range.problems && (
        <Alert tone="warning" title="Showing the last 24 hours instead" className="mb-6">
          {range.problems.join(" ")}
        </Alert>
      )}
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-2">
        <ChartCard
          id="tokens"
          title="Tokens by model"
          description={`Input and output tokens of finished jobs, per ${per}.`}
          data={byModelOverTime(buckets, range.bucket, "tokens")}
          unit="tokens"
          rowHeader={rowHeader}
          empty={{
            title: "No tokens in this range",
            detail: "Each model's tokens will appear here, per " + per + ", once a job finishes.",
          }}
        />
        <ChartCard
          id="cost"
          title="Cost by model"
          description={`USD at the configured prices, per ${per}; models without a price add nothing.`}
          data={byModelOverTime(buckets, range.bucket, "cost")}
          unit="usd"
          rowHeader={rowHeader}
          empty={{
            title: "No cost in this range",
            detail: "What each priced model cost will appear here once one of its jobs finishes.",
          }}
        />
        <ChartCard
          id="outcomes"
          title="Jobs by outcome"
          description={`Jobs that finished completed, failed or cancelled, per ${per}.`}
          data={jobsByOutcome(buckets, range.bucket)}
          unit="jobs"
          rowHeader={rowHeader}
          empty={{
            title: "No finished jobs in this range",
            detail: "Completed, failed and cancelled jobs will appear here as they finish.",
          }}
        />
        <ChartCard
          id="reels"
          title="Reels per day"
          description="Publications published and failed each day (UTC), per account."
          data={reelsPerDay(days, new Map(quota.map((q) => [q.accountId, q.name])))}
          unit="reels"
          rowHeader="Day (UTC)"
          empty={{
            title: "No reels settled in this range",
            detail: "Each account's published and failed reels will appear here, per day.",
          }}
        />
        <ChartCard
          id="ttft"
          title="Time to first token"
          description="p50 and p95 per model over the whole range, from merged histograms (to within about 13 %)."
          data={percentilesByModel(buckets, "ttft")}
          unit="ms"
          rowHeader="Model"
          empty={{
            title: "No first tokens in this range",
            detail: "Each model's p50 and p95 time to first token will appear here once it streams a job.",
          }}
        />
        <ChartCard
          id="tps"
          title="Tokens per second"
          description="p50 and p95 per model over the whole range, from merged histograms."
          data={percentilesByModel(buckets, "tps")}
          unit="per-second"
          rowHeader="Model"
          empty={{
            title: "No generation speeds in this range",
            detail: "Each model's p50 and p95 tokens per second will appear here once it finishes a job.",
          }}
        />
      </div>
      <QuotaCards windows={quota} />
    </>
  );
}
