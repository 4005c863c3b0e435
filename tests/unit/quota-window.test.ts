import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { recordPublished } from "@/lib/accounts/account-quota";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import type { GraphClient, PublishingLimit } from "@/lib/graph/client";
import {
  hourlySampleTimes,
  movingWindowCounts,
  publishedInSpan,
  quotaChartData,
  quotaWindowMs,
  readQuotaWindows,
  type AccountQuotaWindow,
} from "@/lib/usage/quota-window";
import { realRedisPerFile } from "./real-redis";

/** The Usage page's quota chart: the moving-window count of an account's publishes, sampled every hour and now. */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (iso: string) => Date.parse(iso);
const NOW = at("2026-11-26T13:42:00Z");

describe("the samples", () => {
  it("are every whole hour of the last 24 h, then now", () => {
    const times = hourlySampleTimes(NOW);
    expect(times).toHaveLength(25);
    expect(times[0]).toBe(at("2026-11-25T14:00:00Z"));
    expect(times.at(-2)).toBe(at("2026-11-26T13:00:00Z"));
    expect(times.at(-1)).toBe(NOW);
    expect(times.slice(1, -1).every((t, i) => t - times[i] === HOUR)).toBe(true);
  });

  it("start an hour after now − 24 h when now is on the hour, so none is counted twice", () => {
    const onTheHour = at("2026-11-26T13:00:00Z");
    const times = hourlySampleTimes(onTheHour);
    expect([times.length, times[0], times.at(-2), times.at(-1)]).toEqual([
      24,
      at("2026-11-25T14:00:00Z"),
      at("2026-11-26T12:00:00Z"),
      onTheHour,
    ]);
  });
});

describe("the moving-window count", () => {
  const published = [at("2026-11-25T10:00:00Z"), at("2026-11-26T09:30:00Z"), at("2026-11-26T13:00:00Z")];
  const countAt = (iso: string, windowMs = DAY) => movingWindowCounts(published, [at(iso)], windowMs)[0].published;

  it("counts the publishes after t − window and up to t: one leaves the window exactly a window after it was made", () => {
    expect(countAt("2026-11-25T14:00:00Z")).toBe(1);
    expect(countAt("2026-11-26T09:59:59Z")).toBe(2);
    expect(countAt("2026-11-26T10:00:00Z")).toBe(1);
    expect(countAt("2026-11-26T12:59:59Z")).toBe(1);
    expect(countAt("2026-11-26T13:00:00Z")).toBe(2);
    expect(countAt("2026-11-26T13:00:00Z", 2 * HOUR)).toBe(1);
  });

  it("follows the publishes over the samples, in order", () => {
    const samples = movingWindowCounts(published, hourlySampleTimes(NOW), DAY);
    const byHour = Object.fromEntries(samples.map((s) => [new Date(s.at).toISOString().slice(5, 16), s.published]));
    expect(byHour).toMatchObject({
      "11-25T14:00": 1,
      "11-26T09:00": 1,
      "11-26T10:00": 1,
      "11-26T12:00": 1,
      "11-26T13:00": 2,
      "11-26T13:42": 2,
    });
    expect(samples.map((s) => s.published)).toEqual([...Array(19).fill(1), 1, 1, 1, 1, 2, 2]);
  });

  it("is Graph's window when it says one, capped at a day (the record of publishes covers no more), else a day", () => {
    const quota = (quota_duration: number | null) => ({ quota_usage: 0, quota_total: 100, quota_duration });
    expect([quota(86_400), quota(3600), quota(172_800), quota(null), quota(0)].map(quotaWindowMs)).toEqual([
      DAY,
      HOUR,
      DAY,
      DAY,
      DAY,
    ]);
  });
});

describe("the chart's rows", () => {
  const quotaWindow = (quota_total: number | null, published: number[]): AccountQuotaWindow => ({
    accountId: "17841400000000001",
    name: "@brand",
    windowMs: DAY,
    samples: hourlySampleTimes(NOW).map((t, i) => ({ at: t, published: published[i] ?? 0 })),
    graph: { quota_usage: 3, quota_total, quota_duration: 86_400 },
  });

  it("name each hour and now (UTC), with the count and the limit", () => {
    const data = quotaChartData(quotaWindow(100, [0, 1]));
    expect(data.rows[0]).toEqual({ x: "25 Nov 14:00", published: 0, limit: 100 });
    expect(data.rows[1]).toEqual({ x: "25 Nov 15:00", published: 1, limit: 100 });
    expect(data.rows.at(-1)).toEqual({ x: "Now, 26 Nov 13:42", published: 0, limit: 100 });
    expect(data.series.map((s) => s.key)).toEqual(["published", "limit"]);
  });

  it("have no limit column when Graph did not say one, and say when nothing was published", () => {
    const data = quotaChartData(quotaWindow(null, []));
    expect(data.series.map((s) => s.key)).toEqual(["published"]);
    expect(Object.keys(data.rows[0])).toEqual(["x", "published"]);
    expect(publishedInSpan(quotaWindow(null, []))).toBe(false);
    expect(publishedInSpan(quotaWindow(null, [0, 0, 1]))).toBe(true);
  });
});

describe("reading the tenant's accounts", () => {
  const redis = realRedisPerFile();
  const BRAND = { tenantId: "acme", accountId: "17841400000000011", accessToken: "TOKEN-brand" };
  const PLAIN = { tenantId: "acme", accountId: "17841400000000012", accessToken: "TOKEN-plain" };
  const OTHER = { tenantId: "globex", accountId: "17841400000000013", accessToken: "TOKEN-other" };
  const limits: Record<string, PublishingLimit> = {
    // Graph counts 5: the two Dispatch published, and 3 made elsewhere.
    [BRAND.accountId]: { quota_usage: 5, quota_total: 50, quota_duration: 86_400 },
  };
  const graph = {
    readAccount: async (account) => ({
      id: account.accountId,
      ...(account.accountId === BRAND.accountId ? { username: "brand" } : {}),
    }),
    readPublishingLimit: async (account) => {
      const limit = limits[account.accountId];
      if (!limit) throw new Error("Graph did not answer");
      return limit;
    },
  } as Partial<GraphClient> as GraphClient;

  it("gives each of its accounts Dispatch's count over the last day beside Graph's figures, what Graph cannot tell as null", async () => {
    const deps = {
      redis: redis(),
      accounts: new ConnectedAccounts(redis(), randomBytes(32), [BRAND, PLAIN, OTHER]),
      graphs: { default: graph, forAccount: () => graph },
      sandbox: true,
    };
    for (const iso of ["2026-11-24T12:00:00Z", "2026-11-25T13:00:00Z", "2026-11-26T13:30:00Z"])
      await recordPublished(redis(), BRAND.accountId, `pub-${iso}`, at(iso));
    await recordPublished(redis(), OTHER.accountId, "pub-other", at("2026-11-26T13:00:00Z"));

    const windows = await readQuotaWindows(deps, "acme", NOW);
    expect(windows.map((w) => [w.accountId, w.name])).toEqual([
      [BRAND.accountId, "@brand"],
      [PLAIN.accountId, PLAIN.accountId],
    ]);
    const [brand, plain] = windows;
    expect(brand.graph).toEqual(limits[BRAND.accountId]);
    expect(brand.windowMs).toBe(DAY);
    // The publish of 25 Nov 13:00 counts until 26 Nov 13:00; the one two days ago never shows.
    expect(brand.samples.map((s) => s.published)).toEqual([...Array(23).fill(1), 0, 1]);
    expect(plain.graph).toEqual({ quota_usage: null, quota_total: null, quota_duration: null });
    expect(publishedInSpan(plain)).toBe(false);
  });
});
