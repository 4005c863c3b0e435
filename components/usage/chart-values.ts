/** How a chart's values read, on its axis, in its tooltip and in its table: one unit per chart. */
export type ChartUnit = "tokens" | "usd" | "jobs" | "ms" | "per-second" | "reels";

const whole = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const short = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
const precise = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3 });

/** The exact value, as the table shows it: "1,234", "$0.000123", "25.3 ms". */
export function formatValue(value: number, unit: ChartUnit): string {
  switch (unit) {
    case "usd":
      return `$${value.toFixed(value === 0 ? 2 : value < 0.01 ? 6 : 4)}`;
    case "ms":
      return `${precise.format(value)} ms`;
    case "per-second":
      return `${precise.format(value)}/s`;
    default:
      return whole.format(value);
  }
}

/** A short tick label for the value axis: "1.2K", "$0.0012". */
export function formatTick(value: number, unit: ChartUnit): string {
  if (unit === "usd") return value === 0 ? "$0" : `$${precise.format(value)}`;
  return short.format(value);
}

/** The ink every usage chart shares, in the theme's chart colours (app/globals.css): axis labels and the tooltip. */
export const CHART_TICK = { fill: "var(--chart-text)", fontSize: 12 };
export const CHART_TOOLTIP = {
  contentStyle: {
    background: "var(--chart-tooltip)",
    border: "1px solid var(--chart-grid)",
    borderRadius: 8,
    color: "var(--chart-text-strong)",
    fontSize: 12,
  },
  labelStyle: { color: "var(--chart-text-strong)" },
};
