import { describe, expect, it } from "vitest";
import { safeNext } from "@/app/safe-next";
import { formatDateTime, plural, zoneLabel } from "@/components/format";

describe("safeNext", () => {
  it.each([
    ["/dashboard/jobs/5f0c6a1e-0000-4000-8000-000000000000", "/dashboard/jobs/5f0c6a1e-0000-4000-8000-000000000000"],
    ["/dashboard/reels?tab=live&x=1", "/dashboard/reels?tab=live&x=1"],
    ["//evil.example/x", "/dashboard/jobs"],
    ["/\\evil.example", "/dashboard/jobs"],
    ["https://evil.example/", "/dashboard/jobs"],
    ["javascript:alert(1)", "/dashboard/jobs"],
    ["dashboard/jobs", "/dashboard/jobs"],
    ["/dash board", "/dashboard/jobs"],
    [undefined, "/dashboard/jobs"],
    [["/a", "/b"], "/dashboard/jobs"],
  ])("%j → %s", (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });
});

describe("display formats", () => {
  it("says 1 token, not 1 tokens", () => {
    expect([0, 1, 2, 2048].map((n) => plural(n, "token"))).toEqual(["0 tokens", "1 token", "2 tokens", "2,048 tokens"]);
  });

  it("names the year only when it is not this year's", () => {
    const now = new Date("2026-11-24T12:00:00Z");
    expect(formatDateTime("2026-12-01T12:00:00Z", now)).not.toMatch(/2026/);
    expect(formatDateTime("2027-01-02T12:00:00Z", now)).toMatch(/2027/);
  });

  it("names the zone with its offset at that moment", () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const label = zoneLabel(new Date("2026-01-15T12:00:00Z"));
    expect(label).toMatch(/UTC([+-]\d{1,2}(:\d{2})?)?$/);
    if (zone !== "UTC" && zone !== "Etc/UTC") expect(label.startsWith(`${zone}, UTC`)).toBe(true);
  });
});
