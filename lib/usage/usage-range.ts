import { ApiError } from "../errors";
import { parseUsageQuery } from "./usage-query";
import { RETENTION_MS, type UsageBucket } from "./usage-keys";

/** The Usage page's ranges: the last day by the hour, the last week and month by the day, or two dates. */
export const USAGE_RANGES = {
  "24h": { label: "24 h", ms: 86_400_000, bucket: "hour" },
  "7d": { label: "7 d", ms: 7 * 86_400_000, bucket: "day" },
  "30d": { label: "30 d", ms: 30 * 86_400_000, bucket: "day" },
} as const satisfies Record<string, { label: string; ms: number; bucket: UsageBucket }>;

export type UsageRangeKey = keyof typeof USAGE_RANGES | "custom";

export interface PickedRange {
  key: UsageRangeKey;
  fromMs: number;
  toMs: number;
  bucket: UsageBucket;
  /** The custom dates as given (YYYY-MM-DD), to fill the form again. */
  from?: string;
  to?: string;
  /** Why the custom dates were not used (the last 24 h are shown instead). */
  problems?: string[];
}

/** A custom range of up to this long is drawn by the hour, if hours that old are still kept. */
const HOURLY_UP_TO_MS = 3 * 86_400_000;

/**
 * The range the page's query asks for (`?range=24h|7d|30d`, or `?from=&to=` dates, both days
 * included); checked as GET /v1/usage checks its query, so the page and the API agree on what is
 * kept and how long a range may be. Anything else is the last 24 h.
 */
export function pickUsageRange(params: Record<string, string | string[] | undefined>, now: number): PickedRange {
  const one = (name: string) => (typeof params[name] === "string" ? (params[name] as string) : undefined);
  const from = one("from");
  const to = one("to");
  if (from && to) {
    const fromMs = Date.parse(`${from}T00:00:00Z`);
    const toMs = Date.parse(`${to}T00:00:00Z`) + 86_400_000;
    const hourly = toMs - fromMs <= HOURLY_UP_TO_MS && fromMs >= now - RETENTION_MS.hour;
    const bucket: UsageBucket = hourly ? "hour" : "day";
    try {
      const query = parseUsageQuery({ from, to: Number.isNaN(toMs) ? to : String(toMs / 1000), bucket }, now);
      return { key: "custom", fromMs: query.fromMs, toMs: query.toMs, bucket, from, to };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const problems = (error.errors ?? []).map((e) => `${e.path === "to" ? "To" : "From"}: ${e.message}`);
      return { ...lastRange("24h", now), from, to, problems };
    }
  }
  const key = one("range");
  return lastRange(key === "7d" || key === "30d" ? key : "24h", now);
}

function lastRange(key: keyof typeof USAGE_RANGES, now: number): PickedRange {
  const range = USAGE_RANGES[key];
  return { key, fromMs: now - range.ms, toMs: now, bucket: range.bucket };
}
