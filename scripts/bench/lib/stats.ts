/** Small statistics for benchmark figures: nearest-rank percentiles over raw samples. */
export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : NaN;
  const mean = sorted.length ? sorted.reduce((s, v) => s + v, 0) / sorted.length : NaN;
  return {
    n: sorted.length,
    min: sorted[0] ?? NaN,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean,
  };
}

export const median = (values: number[]) => summarize(values).p50;

export const ratio = (value: number, baseline: number) =>
  baseline > 0 && Number.isFinite(value) ? value / baseline : NaN;

/** A number for a table: fixed decimals, thousands separated, "–" when there is none. */
export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const fmtRatio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "–");

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
