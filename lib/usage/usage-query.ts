import { z } from "zod";
import { validationError, zodIssues } from "../errors";
import { MAX_RANGE_MS, RETENTION_MS, USAGE_BUCKETS, type UsageBucket } from "./usage-keys";

/** group_by: jobs by model or by final status; publications by account (jobs have none). */
export const USAGE_GROUPS = ["model", "status", "account"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const UNIX_SECONDS = /^\d{1,11}$/;

/** A time as ISO 8601 (a date alone is UTC midnight) or unix seconds, as ms. */
const instant = z.string().transform((raw, ctx) => {
  const ms = UNIX_SECONDS.test(raw) ? Number(raw) * 1000 : ISO_INSTANT.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({
      code: "custom",
      message: "must be an ISO 8601 time with a zone (2026-11-01T00:00:00Z), a date (2026-11-01) or unix seconds",
    });
    return z.NEVER;
  }
  return ms;
});

/** GET /v1/usage's query, its shape; the range's limits depend on the clock and are checked by parseUsageQuery. */
export const usageQuerySchema = z.strictObject({
  from: instant.meta({
    description:
      "Start of the range, included: ISO 8601 (`2026-11-01`, `2026-11-01T09:00:00Z`) or unix seconds. Rounded down to the start of its bucket (UTC).",
  }),
  to: instant.optional().meta({ description: "End of the range, excluded, in the same forms. Default: now." }),
  bucket: z.enum(USAGE_BUCKETS).default("day").meta({
    description: "Width of each bucket: `hour` (kept 35 days, at most 31 days a request) or `day` (kept 400 days).",
  }),
  group_by: z.enum(USAGE_GROUPS).optional().meta({
    description:
      "Split each bucket's results: `model` or `status` (jobs), `account` (publications). Without it a bucket has one jobs result and one reels result.",
  }),
  format: z
    .enum(["json", "csv"])
    .default("json")
    .meta({ description: "`csv`: the same results as text/csv with a header row, one row per result." }),
});

export interface UsageQuery {
  fromMs: number;
  toMs: number;
  bucket: UsageBucket;
  groupBy: UsageGroup | undefined;
  format: "json" | "csv";
}

const DAY_MS = 86_400_000;
const days = (ms: number) => Math.round((ms / DAY_MS) * 10) / 10;

/** Parses and checks the query (422 naming each parameter at fault); `now` is the clock's ms. */
export function parseUsageQuery(params: Record<string, string>, now: number): UsageQuery {
  const parsed = usageQuerySchema.safeParse(params);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const { from: fromMs, to: toMs = now, bucket, group_by: groupBy, format } = parsed.data;
  const problems: { path: string; message: string }[] = [];
  if (toMs <= fromMs) problems.push({ path: "to", message: "must be after from" });
  else if (toMs - fromMs > MAX_RANGE_MS[bucket])
    problems.push({
      path: "to",
      message: `the range is ${days(toMs - fromMs)} days: ${bucket === "hour" ? "hourly" : "daily"} buckets cover at most ${days(MAX_RANGE_MS[bucket])} days a request${bucket === "hour" ? "; use bucket=day, or a shorter range" : ""}`,
    });
  if (fromMs < now - RETENTION_MS[bucket])
    problems.push({
      path: "from",
      message: `${bucket === "hour" ? "hourly" : "daily"} figures are kept ${days(RETENTION_MS[bucket])} days: from must be on or after ${new Date(now - RETENTION_MS[bucket]).toISOString()}${bucket === "hour" ? "; use bucket=day for older ones" : ""}`,
    });
  if (problems.length) throw validationError(problems);
  return { fromMs, toMs, bucket, groupBy, format };
}
