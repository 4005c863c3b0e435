import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { parseBucket } from "@/lib/usage/read-usage";
import { jobTallies, reelTallies, type JobFacts, type ReelFacts, type Tally } from "@/lib/usage/usage-facts";
import { usageCsv } from "@/lib/usage/usage-csv";
import { usageKeys } from "@/lib/usage/usage-keys";
import { parseUsageQuery } from "@/lib/usage/usage-query";
import { pickUsageRange } from "@/lib/usage/usage-range";
import { bucketResults, type UsagePage } from "@/lib/usage/usage-report";

const NOW = Date.parse("2026-11-26T12:30:00Z");
const HOUR = Date.parse("2026-11-26T12:00:00Z");

/** What HINCRBY would leave in each hash. */
function applied(tallies: Tally[]): Map<string, Record<string, string>> {
  const hashes = new Map<string, Record<string, string>>();
  for (const { key, fields } of tallies) {
    const hash = hashes.get(key) ?? {};
    for (const [field, by] of fields) hash[field] = String(Number(hash[field] ?? 0) + by);
    hashes.set(key, hash);
  }
  return hashes;
}

const job = (over: Partial<JobFacts>): JobFacts => ({
  tenantId: "acme",
  model: "local-ngram",
  status: "COMPLETED",
  at: HOUR + 60_000,
  inputTokens: 10,
  outputTokens: 20,
  cost: 0.000123456789,
  ttftMs: 30,
  tokensPerSecond: 40,
  ...over,
});
const reel = (over: Partial<ReelFacts>): ReelFacts => ({
  tenantId: "acme",
  accountId: "17841400000000001",
  status: "PUBLISHED",
  at: HOUR + 120_000,
  submitToLiveMs: 4000,
  ...over,
});

function hourBucket(jobs: JobFacts[], reels: ReelFacts[]) {
  const hashes = applied([...jobs.flatMap((j) => jobTallies(j, NOW)), ...reels.flatMap((r) => reelTallies(r, NOW))]);
  return parseBucket(
    HOUR,
    HOUR + 3_600_000,
    hashes.get(usageKeys.bucket("jobs", "acme", "hour", HOUR)) ?? {},
    hashes.get(usageKeys.bucket("reels", "acme", "hour", HOUR)) ?? {},
  );
}

describe("a bucket's results", () => {
  const bucket = hourBucket(
    [
      job({}),
      job({ cost: 0.000000000123 }),
      job({
        model: "gpt-4o-mini",
        status: "FAILED",
        inputTokens: 5,
        outputTokens: 0,
        cost: null,
        ttftMs: null,
        tokensPerSecond: null,
      }),
      job({ status: "CANCELLED", outputTokens: 3, cost: 0, ttftMs: 900, tokensPerSecond: null }),
    ],
    [
      reel({}),
      reel({ status: "FAILED", submitToLiveMs: null }),
      reel({ accountId: "other", status: "CANCELLED", submitToLiveMs: null }),
    ],
  );

  it("add up per model, with the model's own percentiles", () => {
    const [gpt, local] = bucketResults(bucket, "model");
    expect(gpt).toMatchObject({
      model: "gpt-4o-mini",
      status: null,
      jobs: 1,
      input_tokens: 5,
      output_tokens: 0,
      ttft_ms: null,
    });
    expect(gpt).toMatchObject({ cost: { currency: "USD", amount: 0 } });
    expect(local).toMatchObject({ model: "local-ngram", jobs: 3, input_tokens: 30, output_tokens: 43 });
    // 0.000123456789 USD is 123457 nano-dollars (rounded); 0.000000000123 rounds to none
    expect(local).toMatchObject({ cost: { amount: 0.000123457 } });
    expect(local.object === "usage.jobs.result" && local.ttft_ms?.p50).toBeGreaterThan(25);
    expect(local.object === "usage.jobs.result" && local.ttft_ms?.p95).toBeGreaterThan(700);
  });

  it("add up per status, with no percentiles (the histograms are per model)", () => {
    expect(
      bucketResults(bucket, "status").map((r) => r.object === "usage.jobs.result" && [r.status, r.jobs, r.ttft_ms]),
    ).toEqual([
      ["CANCELLED", 1, null],
      ["COMPLETED", 2, null],
      ["FAILED", 1, null],
    ]);
  });

  it("split reels per account", () => {
    expect(bucketResults(bucket, "account")).toEqual([
      {
        object: "usage.reels.result",
        account_id: "17841400000000001",
        published: 1,
        failed: 1,
        cancelled: 0,
        submit_to_live_ms: expect.objectContaining({ p50: expect.any(Number) }),
      },
      {
        object: "usage.reels.result",
        account_id: "other",
        published: 0,
        failed: 0,
        cancelled: 1,
        submit_to_live_ms: null,
      },
    ]);
  });

  it("are one jobs total and one reels total without group_by", () => {
    const results = bucketResults(bucket, undefined);
    expect(results.map((r) => r.object)).toEqual(["usage.jobs.result", "usage.reels.result"]);
    expect(results[0]).toMatchObject({ model: null, status: null, jobs: 4, input_tokens: 35, output_tokens: 43 });
    expect(results[1]).toMatchObject({ account_id: null, published: 1, failed: 1, cancelled: 1 });
  });

  it("skip fields they do not know", () => {
    const parsed = parseBucket(0, 1, { nonsense: "1", '["jobs","m","RUNNING"]': "1", '["ttft","m","999"]': "1" }, {});
    expect(parsed.jobs).toEqual([]);
    expect(parsed.ttft).toEqual({});
  });

  it("leave a bucket past its keeping out of the tallies", () => {
    const old = jobTallies(job({ at: NOW - 40 * 86_400_000 }), NOW);
    expect(old.map((t) => t.key)).toEqual([
      usageKeys.bucket("jobs", "acme", "day", Date.parse("2026-10-17T00:00:00Z")),
    ]);
  });
});

describe("GET /v1/usage's query", () => {
  const parse = (params: Record<string, string>) => parseUsageQuery(params, NOW);
  const problems = (params: Record<string, string>) => {
    try {
      parse(params);
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, errors: error.errors };
      throw error;
    }
    throw new Error("no error");
  };

  it("reads ISO times, dates and unix seconds, with its defaults", () => {
    expect(parse({ from: "2026-11-25" })).toEqual({
      fromMs: Date.parse("2026-11-25T00:00:00Z"),
      toMs: NOW,
      bucket: "day",
      groupBy: undefined,
      format: "json",
    });
    const from = String(HOUR / 1000 - 3600);
    expect(parse({ from, to: "2026-11-26T13:30:00+01:00", bucket: "hour", group_by: "model", format: "csv" })).toEqual({
      fromMs: HOUR - 3_600_000,
      toMs: Date.parse("2026-11-26T12:30:00Z"),
      bucket: "hour",
      groupBy: "model",
      format: "csv",
    });
  });

  it.each([
    [{}, "from", /Invalid input|expected string/],
    [{ from: "yesterday" }, "from", /ISO 8601/],
    [{ from: "2026-11-25", to: "2026-11-25" }, "to", /must be after from/],
    [{ from: "2026-11-26", to: "2026-11-25" }, "to", /must be after from/],
    [
      { from: "2026-10-01", to: "2026-11-26", bucket: "hour" },
      "to",
      /hourly buckets cover at most 31 days.*bucket=day/,
    ],
    [{ from: "2025-01-01", to: "2026-11-26" }, "to", /daily buckets cover at most 400 days/],
    [{ from: "2025-09-01", to: "2025-09-02" }, "from", /kept 400 days/],
    [{ from: "2026-10-01", to: "2026-10-02", bucket: "hour" }, "from", /hourly figures are kept 35 days.*bucket=day/],
    [{ from: "2026-11-25", bucket: "minute" }, "bucket", /hour|day/],
    [{ from: "2026-11-25", group_by: "project" }, "group_by", /model|status|account/],
    [{ from: "2026-11-25", format: "xlsx" }, "format", /json|csv/],
    [{ from: "2026-11-25", limit: "7" }, "limit", /not a known field/],
  ])("refuses %j with a 422 naming %s", (params, path, message) => {
    const { status, errors } = problems(params);
    expect(status).toBe(422);
    expect(errors).toContainEqual({ path, message: expect.stringMatching(message) });
  });
});

describe("the CSV", () => {
  const page = (groupBy: UsagePage["group_by"], results: UsagePage["data"][number]["results"][]): UsagePage => ({
    object: "page",
    bucket: "hour",
    group_by: groupBy,
    data: results.map((r, i) => ({
      object: "bucket",
      start_time: HOUR / 1000 + i * 3600,
      end_time: HOUR / 1000 + (i + 1) * 3600,
      results: r,
    })),
    has_more: false,
    next_page: null,
  });
  const bucket = hourBucket(
    [job({}), job({ model: "=cmd|' /C calc'!A0", ttftMs: null, tokensPerSecond: null })],
    [reel({})],
  );

  it("has a header row and a row per bucket without group_by, empty buckets as zeros", () => {
    const csv = usageCsv(page(null, [bucketResults(bucket, undefined), []]));
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "start_time,end_time,jobs,input_tokens,output_tokens,cost_usd,ttft_p50_ms,ttft_p95_ms,tokens_per_second_p50,tokens_per_second_p95,reels_published,reels_failed,reels_cancelled,submit_to_live_p50_ms,submit_to_live_p95_ms",
    );
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(
      /^2026-11-26T12:00:00\.000Z,2026-11-26T13:00:00\.000Z,2,20,40,0\.000246914,[\d.]+,[\d.]+,[\d.]+,[\d.]+,1,0,0,[\d.]+,[\d.]+$/,
    );
    expect(lines[2]).toBe("2026-11-26T13:00:00.000Z,2026-11-26T14:00:00.000Z,0,0,0,0,,,,,0,0,0,,");
  });

  it("has a row per model with group_by=model, a name a spreadsheet would run as a formula defused", () => {
    const lines = usageCsv(page("model", [bucketResults(bucket, "model")]))
      .trimEnd()
      .split("\r\n");
    expect(lines[0]).toMatch(/^start_time,end_time,model,jobs,.*tokens_per_second_p95$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^[^,]+,[^,]+,'=cmd\|' \/C calc'!A0,1,10,20,/);
    expect(lines[2]).toMatch(/^[^,]+,[^,]+,local-ngram,1,10,20,/);
  });

  it("has reel columns only with group_by=account", () => {
    const lines = usageCsv(page("account", [bucketResults(bucket, "account")]))
      .trimEnd()
      .split("\r\n");
    expect(lines[0]).toBe(
      "start_time,end_time,account_id,reels_published,reels_failed,reels_cancelled,submit_to_live_p50_ms,submit_to_live_p95_ms",
    );
    expect(lines[1]).toMatch(/,17841400000000001,1,0,0,[\d.]+,[\d.]+$/);
  });
});

describe("the Usage page's range", () => {
  it("is the last 24 h by the hour unless asked otherwise, the last 7 or 30 days by the day", () => {
    expect(pickUsageRange({}, NOW)).toEqual({ key: "24h", fromMs: NOW - 86_400_000, toMs: NOW, bucket: "hour" });
    expect(pickUsageRange({ range: "7d" }, NOW)).toMatchObject({
      key: "7d",
      fromMs: NOW - 7 * 86_400_000,
      bucket: "day",
    });
    expect(pickUsageRange({ range: "30d" }, NOW)).toMatchObject({ key: "30d", bucket: "day" });
    expect(pickUsageRange({ range: ["7d", "30d"] }, NOW)).toMatchObject({ key: "24h" });
  });

  it("takes two dates, both included: by the hour up to three days, by the day beyond", () => {
    expect(pickUsageRange({ from: "2026-11-24", to: "2026-11-26" }, NOW)).toEqual({
      key: "custom",
      fromMs: Date.parse("2026-11-24T00:00:00Z"),
      toMs: Date.parse("2026-11-27T00:00:00Z"),
      bucket: "hour",
      from: "2026-11-24",
      to: "2026-11-26",
    });
    expect(pickUsageRange({ from: "2026-11-01", to: "2026-11-26" }, NOW)).toMatchObject({
      key: "custom",
      bucket: "day",
    });
  });

  it("shows the last 24 h, and says why, for dates it cannot show", () => {
    expect(pickUsageRange({ from: "2026-11-26", to: "2026-11-20" }, NOW)).toMatchObject({
      key: "24h",
      from: "2026-11-26",
      problems: ["To: must be after from"],
    });
    expect(pickUsageRange({ from: "2024-01-01", to: "2024-01-02" }, NOW).problems).toEqual([
      expect.stringMatching(/^From: daily figures are kept 400 days/),
    ]);
    expect(pickUsageRange({ from: "soon", to: "later" }, NOW).problems?.length).toBeGreaterThan(0);
  });
});
