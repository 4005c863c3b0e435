"use client";

import { CartesianGrid, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { ChartData } from "@/lib/usage/usage-charts";
import { CHART_TICK, CHART_TOOLTIP, formatTick, formatValue } from "./chart-values";

/**
 * An account's moving-window count as a step line, with its limit as a dashed line (the axis
 * reaches up to it, however far below it the count stays). A picture for sighted readers, hidden
 * from assistive technology like the bar charts: the table beside it has the same numbers.
 */
export function QuotaLineChart({
  data,
  limit,
  height = 240,
}: {
  data: ChartData;
  limit: number | null;
  height?: number;
}) {
  const published = data.series.find((s) => s.key === "published")!;
  return (
    <div aria-hidden="true" className="w-full overflow-hidden" style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={data.rows} accessibilityLayer={false} margin={{ top: 16, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid vertical={false} stroke="var(--chart-grid)" />
          {/* Rows read "26 Nov 13:00" and "Now, 26 Nov 13:42": the axis shows the time. */}
          <XAxis
            dataKey="x"
            tick={CHART_TICK}
            tickLine={false}
            axisLine={{ stroke: "var(--chart-grid)" }}
            minTickGap={16}
            tickFormatter={(label: string) => label.slice(-5)}
          />
          <YAxis
            tick={CHART_TICK}
            tickLine={false}
            axisLine={false}
            width={40}
            allowDecimals={false}
            tickFormatter={(value: number) => formatTick(value, "reels")}
          />
          <Tooltip {...CHART_TOOLTIP} formatter={(value) => formatValue(Number(value), "reels")} />
          {limit !== null && (
            <ReferenceLine
              y={limit}
              ifOverflow="extendDomain"
              stroke="var(--chart-failed)"
              strokeDasharray="6 4"
              label={{ value: `Limit ${limit}`, position: "insideTopRight", fill: "var(--chart-text)", fontSize: 12 }}
            />
          )}
          <Line
            type="stepAfter"
            dataKey={published.key}
            name={published.label}
            stroke={published.color}
            strokeWidth={2}
            dot={false}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}
