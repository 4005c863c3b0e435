import { publishedInSpan, quotaChartData, type AccountQuotaWindow } from "@/lib/usage/quota-window";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Empty } from "../ui/states";
import { ChartTable, TableView } from "./chart-table";
import { QuotaLineChart } from "./quota-line-chart";

const hoursOf = (ms: number) => Math.round(ms / 3_600_000);

/**
 * The publishing quota of each connected account over the last 24 h, whatever range the page
 * shows: Dispatch's own moving-window count as a step line against the limit, and Graph's count.
 */
export function QuotaCards({ windows }: { windows: AccountQuotaWindow[] }) {
  return (
    <section aria-labelledby="quota-heading" className="mt-8">
      <h2 id="quota-heading" className="text-base font-semibold text-zinc-900 dark:text-zinc-100">
        Publishing quota
      </h2>
      <p className="mt-1 max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
        How many reels Dispatch published through each account in the moving 24 h its limit counts, read every hour of
        the last day and now, whatever the range above. Posts made outside Dispatch (in the Instagram app or another
        tool) count against the limit too, but Dispatch knows of them only through Graph&apos;s own count (quota_usage),
        given with each account: the line leaves them out.
      </p>
      {windows.length === 0 ? (
        <Card className="mt-4" data-testid="usage-quota">
          <CardBody>
            <Empty title="No connected accounts">
              Each account&apos;s reels published in the moving 24 h will appear here against its publishing limit, once
              an account is connected.
            </Empty>
          </CardBody>
        </Card>
      ) : (
        <div className="mt-4 grid grid-cols-1 items-start gap-6 lg:grid-cols-2">
          {windows.map((quota) => (
            <QuotaCard key={quota.accountId} quota={quota} />
          ))}
        </div>
      )}
    </section>
  );
}

function QuotaCard({ quota }: { quota: AccountQuotaWindow }) {
  const id = `quota-${quota.accountId}`;
  const title = `${quota.name}: reels in the moving ${hoursOf(quota.windowMs)} h`;
  const { quota_usage: used, quota_total: limit } = quota.graph;
  const data = quotaChartData(quota);
  return (
    <Card aria-labelledby={`${id}-title`} data-testid={`usage-${id}`} className="min-w-0">
      <CardHeader title={<span id={`${id}-title`}>{title}</span>} description={graphCount(used, limit)} />
      <CardBody>
        {publishedInSpan(quota) ? (
          <>
            <QuotaLineChart data={data} limit={limit} />
            <TableView>
              <ChartTable title={title} data={data} unit="reels" rowHeader="Time (UTC)" />
            </TableView>
          </>
        ) : (
          <Empty title="Nothing published through Dispatch in the last 24 h">
            Each reel Dispatch publishes to this account will appear here, counted for {hoursOf(quota.windowMs)} h
            {limit === null ? "" : ` against its limit of ${limit}`}.
          </Empty>
        )}
      </CardBody>
    </Card>
  );
}

/** Graph's own figure (posts made elsewhere included), as cached or read now. */
function graphCount(used: number | null, limit: number | null): string {
  if (used === null)
    return "Graph's own count is not known right now (Graph did not answer, or the account needs reconnecting).";
  return limit === null
    ? `Graph counts ${used} posts in the moving window now, outside Dispatch included.`
    : `Graph counts ${used} of ${limit} posts in the moving window now, outside Dispatch included.`;
}
