import type { JobsResult, ReelsResult, UsagePage } from "./usage-report";

/**
 * GET /v1/usage?format=csv: the page's results as a spreadsheet reads them, a header row and one row
 * per bucket and group; times in ISO 8601 (UTC). Without group_by every bucket has its row (zeros
 * when nothing happened), its jobs and reels side by side; with it, one row per group present.
 */

interface Row {
  start: number;
  end: number;
  group: string | null;
  jobs?: JobsResult;
  reels?: ReelsResult;
}

type Cell = string | number | null | undefined;

const JOB_COLUMNS: [string, (r: JobsResult | undefined) => Cell][] = [
  ["jobs", (r) => r?.jobs ?? 0],
  ["input_tokens", (r) => r?.input_tokens ?? 0],
  ["output_tokens", (r) => r?.output_tokens ?? 0],
  ["cost_usd", (r) => r?.cost.amount ?? 0],
  ["ttft_p50_ms", (r) => r?.ttft_ms?.p50],
  ["ttft_p95_ms", (r) => r?.ttft_ms?.p95],
  ["tokens_per_second_p50", (r) => r?.tokens_per_second?.p50],
  ["tokens_per_second_p95", (r) => r?.tokens_per_second?.p95],
];

const REEL_COLUMNS: [string, (r: ReelsResult | undefined) => Cell][] = [
  ["reels_published", (r) => r?.published ?? 0],
  ["reels_failed", (r) => r?.failed ?? 0],
  ["reels_cancelled", (r) => r?.cancelled ?? 0],
  ["submit_to_live_p50_ms", (r) => r?.submit_to_live_ms?.p50],
  ["submit_to_live_p95_ms", (r) => r?.submit_to_live_ms?.p95],
];

const GROUP_HEADER = { model: "model", status: "status", account: "account_id" } as const;

export function usageCsv(page: UsagePage): string {
  const groupBy = page.group_by;
  const jobs = groupBy !== "account";
  const reels = groupBy === null || groupBy === "account";
  const header = [
    "start_time",
    "end_time",
    ...(groupBy ? [GROUP_HEADER[groupBy]] : []),
    ...(jobs ? JOB_COLUMNS.map(([name]) => name) : []),
    ...(reels ? REEL_COLUMNS.map(([name]) => name) : []),
  ];
  const lines = rowsOf(page).map((row) =>
    [
      new Date(row.start).toISOString(),
      new Date(row.end).toISOString(),
      ...(groupBy ? [row.group] : []),
      ...(jobs ? JOB_COLUMNS.map(([, of]) => of(row.jobs)) : []),
      ...(reels ? REEL_COLUMNS.map(([, of]) => of(row.reels)) : []),
    ].map(csvCell),
  );
  return [header, ...lines].map((cells) => cells.join(",")).join("\r\n") + "\r\n";
}

function rowsOf(page: UsagePage): Row[] {
  return page.data.flatMap((bucket) => {
    const rows = new Map<string, Row>();
    const start = bucket.start_time * 1000;
    const end = bucket.end_time * 1000;
    const rowFor = (group: string | null) => {
      let row = rows.get(group ?? "");
      if (!row) rows.set(group ?? "", (row = { start, end, group }));
      return row;
    };
    if (page.group_by === null) rowFor(null);
    for (const result of bucket.results) {
      if (result.object === "usage.jobs.result") rowFor(result.model ?? result.status).jobs = result;
      else rowFor(result.account_id).reels = result;
    }
    return [...rows.values()];
  });
}

/** RFC 4180 quoting; a text cell a spreadsheet would run as a formula (= + - @) gets a leading quote mark. */
export function csvCell(value: Cell): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
