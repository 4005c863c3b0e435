import type { ChartData } from "@/lib/usage/usage-charts";
import { hasData } from "@/lib/usage/usage-charts";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Empty } from "../ui/states";
import { UsageBarChart } from "./bar-chart";
import { formatValue, type ChartUnit } from "./chart-values";

interface ChartCardProps {
  id: string;
  title: string;
  description: string;
  data: ChartData;
  unit: ChartUnit;
  /** What the rows are: "Hour (UTC)", "Model"… */
  rowHeader: string;
  /** What the chart will show once there is something to show. */
  empty: { title: string; detail: string };
}

/** One chart of the Usage page with its numbers as a table (for screen readers, and for anyone who wants them), or what will appear. */
export function ChartCard({ id, title, description, data, unit, rowHeader, empty }: ChartCardProps) {
  return (
    <Card aria-labelledby={`${id}-title`} data-testid={`usage-${id}`} className="min-w-0">
      <CardHeader title={<span id={`${id}-title`}>{title}</span>} description={description} />
      <CardBody>
        {hasData(data) ? (
          <>
            <UsageBarChart data={data} unit={unit} />
            <details className="mt-3 text-sm">
              <summary className="cursor-pointer rounded-md py-3 font-medium sm:py-1 text-zinc-700 outline-none focus-visible:ring-2 focus-visible:ring-indigo-500 dark:text-zinc-300">
                Table view
              </summary>
              <ChartTable title={title} data={data} unit={unit} rowHeader={rowHeader} />
            </details>
          </>
        ) : (
          <Empty title={empty.title}>{empty.detail}</Empty>
        )}
      </CardBody>
    </Card>
  );
}

/** The chart's numbers; rows where every value is zero are left out. */
function ChartTable({ title, data, unit, rowHeader }: Omit<ChartCardProps, "id" | "description" | "empty">) {
  const rows = data.rows.filter((row) => data.series.some((s) => Number(row[s.key]) > 0));
  return (
    <div className="mt-2 overflow-x-auto">
      <table className="w-full text-left text-sm tabular-nums">
        <caption className="sr-only">{title}</caption>
        <thead>
          <tr className="border-b border-zinc-200 text-zinc-600 dark:border-zinc-800 dark:text-zinc-400">
            <th scope="col" className="py-1.5 pr-4 font-medium">
              {rowHeader}
            </th>
            {data.series.map((s) => (
              <th key={s.key} scope="col" className="py-1.5 pr-4 text-right font-medium">
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.x} className="border-b border-zinc-100 last:border-0 dark:border-zinc-800">
              <th scope="row" className="py-1.5 pr-4 font-normal whitespace-nowrap text-zinc-700 dark:text-zinc-300">
                {row.x}
              </th>
              {data.series.map((s) => (
                <td key={s.key} className="py-1.5 pr-4 text-right text-zinc-900 dark:text-zinc-100">
                  {formatValue(Number(row[s.key] ?? 0), unit)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
