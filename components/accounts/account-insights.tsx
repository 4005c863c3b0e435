"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { INSIGHT_LABELS, REEL_INSIGHT_METRICS, type AccountInsightsRow } from "@/lib/graph/insights-metrics";
import { errorMessage } from "../api";
import { fetchAccountInsights, fetchAccounts, reelKeys } from "../reels/queries";
import { formatInsight } from "../reels/reel-insights";
import { focusRing } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Field } from "../ui/field";
import { Select } from "../ui/select";
import { Alert, Empty, Loading } from "../ui/states";
import { Time } from "../ui/time";

type SortKey = "published_at" | (typeof REEL_INSIGHT_METRICS)[number];
const COLUMNS: { key: SortKey; label: string }[] = [
  { key: "published_at", label: "Published" },
  ...REEL_INSIGHT_METRICS.map((m) => ({ key: m, label: INSIGHT_LABELS[m] })),
];

/** How an account's reels did, one row each, sorted by any column (the server sorts all of them, not one page). */
export function AccountInsights() {
  const accounts = useQuery({ queryKey: reelKeys.accounts, queryFn: fetchAccounts, staleTime: 60_000 });
  const [chosen, setChosen] = useState<string>();
  const [sort, setSort] = useState<{ key: SortKey; order: "asc" | "desc" }>({ key: "published_at", order: "desc" });
  const accountId = chosen ?? accounts.data?.data[0]?.account_id;
  const rows = useQuery({
    queryKey: reelKeys.accountInsights(accountId ?? "", sort.key, sort.order),
    queryFn: () => fetchAccountInsights(accountId!, sort.key, sort.order),
    enabled: !!accountId,
  });
  const sortBy = (key: SortKey) =>
    setSort((s) => ({ key, order: s.key === key && s.order === "desc" ? "asc" : "desc" }));

  return (
    <Card data-testid="account-insights">
      <CardHeader
        title="Reel insights"
        description="The last figures Instagram gave for each published reel: read when a reel's page is opened (at most every 15 minutes) and once a day for the last 30 days' reels."
      />
      <CardBody className="space-y-4">
        {accounts.isPending ? (
          <Loading />
        ) : accounts.isError ? (
          <Alert title="Could not load accounts">{errorMessage(accounts.error)}</Alert>
        ) : !accountId ? (
          <Empty title="No accounts yet">
            Connect an account; the insights of its reels appear here once published.
          </Empty>
        ) : (
          <>
            <Field label="Account" className="max-w-sm">
              {(control) => (
                <Select {...control} value={accountId} onChange={(e) => setChosen(e.target.value)}>
                  {accounts.data.data.map((a) => (
                    <option key={a.account_id} value={a.account_id}>
                      {a.username ? `@${a.username}` : a.account_id}
                    </option>
                  ))}
                </Select>
              )}
            </Field>
            {rows.isPending ? (
              <Loading label="Loading insights…" />
            ) : rows.isError ? (
              <Alert title="Could not load the insights">{errorMessage(rows.error)}</Alert>
            ) : rows.data.data.length === 0 ? (
              <Empty title="No published reels with insights yet">
                A reel appears here once it is published through Dispatch.
              </Empty>
            ) : (
              <InsightsTable rows={rows.data.data} sort={sort} onSort={sortBy} />
            )}
          </>
        )}
      </CardBody>
    </Card>
  );
}

function InsightsTable({
  rows,
  sort,
  onSort,
}: {
  rows: AccountInsightsRow[];
  sort: { key: SortKey; order: "asc" | "desc" };
  onSort: (key: SortKey) => void;
}) {
  return (
    <div className="overflow-x-auto" tabIndex={0} role="region" aria-label="Reel insights table">
      <table className="w-full min-w-[56rem] text-left text-sm" data-testid="account-insights-table">
        <thead className="text-xs text-zinc-600 dark:text-zinc-400">
          <tr>
            <th scope="col" className="py-2 pr-3 font-medium">
              Reel
            </th>
            {COLUMNS.map(({ key, label }) => (
              <th
                key={key}
                scope="col"
                className="py-2 pr-3 font-medium"
                aria-sort={sort.key === key ? (sort.order === "asc" ? "ascending" : "descending") : undefined}
              >
                <button
                  type="button"
                  onClick={() => onSort(key)}
                  className={cx("inline-flex min-h-11 items-center gap-1 rounded sm:min-h-0", focusRing)}
                >
                  {label}
                  <span aria-hidden="true">{sort.key === key ? (sort.order === "asc" ? "▲" : "▼") : ""}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {rows.map((row) => (
            <tr key={row.media_id} data-testid="account-insights-row">
              <td className="max-w-[14rem] truncate py-2 pr-3 text-zinc-800 dark:text-zinc-200">
                <Link
                  href={`/dashboard/reels/${row.publication_id}`}
                  className={cx("rounded hover:underline", focusRing)}
                >
                  {row.caption || row.media_id}
                </Link>
              </td>
              <td className="py-2 pr-3 whitespace-nowrap text-zinc-700 dark:text-zinc-300">
                <Time iso={row.published_at} />
              </td>
              {!row.metrics && row.status === "no-permission" ? (
                // Said once for the row: the token lacks the insights permission, only a new connection helps.
                <td
                  colSpan={REEL_INSIGHT_METRICS.length}
                  className="py-2 pr-3 text-amber-800 dark:text-amber-300"
                  data-testid="insights-no-permission"
                >
                  Reconnect the account to allow insights
                </td>
              ) : (
                REEL_INSIGHT_METRICS.map((metric) => (
                  <td
                    key={metric}
                    className="py-2 pr-3 text-zinc-800 tabular-nums dark:text-zinc-200"
                    data-metric={metric}
                  >
                    {row.metrics ? formatInsight(metric, row.metrics[metric]) : "not yet"}
                  </td>
                ))
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
