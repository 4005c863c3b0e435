import type { ChartData } from "@/lib/usage/usage-charts";
import { formatValue, type ChartUnit } from "./chart-values";

/** A chart's numbers behind a "Table view" disclosure: for screen readers, and for anyone who wants them. */
export function TableView({ children }: { children: React.ReactNode }) {
  return (
    <details className="mt-3 text-sm">
      <summary className="cursor-pointer rounded-md py-3 font-medium sm:py-1 text-zinc-700 outline-none focus-visible:ring-2 focus-visible:ring-indigo-500 dark:text-zinc-300">
        Table view
      </summary>
      {children}
    </details>
  );
}

/** The rows of `data` as a table: one row per x value, one column per series. */
export function ChartTable({
  title,
  data,
  unit,
  rowHeader,
}: {
  title: string;
  data: ChartData;
  unit: ChartUnit;
  /** What the rows are: "Hour (UTC)", "Model"… */
  rowHeader: string;
}) {
  return (
    // A table wider than the card scrolls: focusable, so a keyboard can scroll it too (axe's scrollable-region-focusable).
    <div className="mt-2 overflow-x-auto" tabIndex={0}>
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
          {data.rows.map((row) => (
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
