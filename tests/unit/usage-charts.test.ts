import { describe, expect, it } from "vitest";
import type { BucketUsage } from "@/lib/usage/read-usage";
import { reelsPerDay } from "@/lib/usage/usage-charts";

const DAY = 86_400_000;
const day = (start: number, reels: BucketUsage["reels"]): BucketUsage => ({
  start,
  end: start + DAY,
  jobs: [],
  ttft: {},
  tps: {},
  reels,
  live: {},
});

describe("reelsPerDay", () => {
  const days = [
    day(Date.UTC(2026, 10, 24), [
      { accountId: "1784", status: "PUBLISHED", count: 2 },
      { accountId: "1784", status: "FAILED", count: 1 },
      { accountId: "gone", status: "PUBLISHED", count: 1 },
    ]),
    day(Date.UTC(2026, 10, 25), [{ accountId: "1784", status: "CANCELLED", count: 3 }]),
  ];

  it("counts each account's published and failed reels per day, cancelled ones left out", () => {
    const chart = reelsPerDay(days);
    expect(chart.rows.map((row) => [row["1784 published"], row["1784 failed"], row["gone published"]])).toEqual([
      [2, 1, 1],
      [0, 0, 0],
    ]);
  });

  it("names an account by what the page knows it as, and one it no longer knows by its id", () => {
    const chart = reelsPerDay(days, new Map([["1784", "@brand"]]));
    expect(chart.series.map((s) => s.label)).toEqual([
      "@brand published",
      "@brand failed",
      "gone published",
      "gone failed",
    ]);
  });
});
