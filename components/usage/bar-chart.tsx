"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { ChartData } from "@/lib/usage/usage-charts";
import { CHART_TICK, CHART_TOOLTIP, formatTick, formatValue, type ChartUnit } from "./chart-values";

/**
 * A bar chart of `data`, stacked where its series share a stack, drawn in the theme's chart colours.
 * It is a picture for sighted readers: hidden from assistive technology (no keyboard layer), which
 * reads the same numbers in the table beside it.
 */
export function UsageBarChart({ data, unit, height = 240 }: { data: ChartData; unit: ChartUnit; height?: number }) {
  // Drawn once the browser has measured its box (nothing on the server), and never wider than the card.
  return (
    <div aria-hidden="true" className="w-full overflow-hidden" style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data.rows} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid vertical={false} stroke="var(--chart-grid)" />
          <XAxis
            dataKey="x"
            tick={CHART_TICK}
            tickLine={false}
            axisLine={{ stroke: "var(--chart-grid)" }}
            minTickGap={12}
          />
          <YAxis
            tick={CHART_TICK}
            tickLine={false}
            axisLine={false}
            width={56}
            // Jobs and reels are counted whole: no 0.8 or 2.3 ticks on a small count's axis.
            allowDecimals={unit !== "jobs" && unit !== "reels"}
            tickFormatter={(value: number) => formatTick(value, unit)}
          />
          <Tooltip
            cursor={{ fill: "var(--chart-cursor)" }}
            {...CHART_TOOLTIP}
            formatter={(value) => formatValue(Number(value), unit)}
          />
          <Legend
            wrapperStyle={{ fontSize: 12 }}
            formatter={(label: string) => <span style={{ color: "var(--chart-text)" }}>{label}</span>}
          />
          {data.series.map((series) => (
            <Bar
              key={series.key}
              dataKey={series.key}
              name={series.label}
              stackId={series.stack}
              fill={series.color}
              maxBarSize={48}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
