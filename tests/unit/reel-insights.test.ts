import { describe, expect, it } from "vitest";
import { GraphError, GraphTransportError } from "@/lib/graph/error";
import { DEPRECATED_INSIGHT_METRICS, REEL_INSIGHT_METRICS } from "@/lib/graph/insights-metrics";
import { parseInsightsAnswer } from "@/lib/graph/parse-insights";
import { DAILY_SWEEP, nextReadingAt, ON_VIEW, readingDue } from "@/lib/reels/insights/refresh-policy";
import { isMissingPermission } from "@/lib/reels/insights/refresh-reel-insights";
import { seededInsights } from "@/lib/graph/sandbox/insights-growth";
import { requestedMetrics } from "@/lib/graph/sandbox/media-insights";

const MEDIA = "17912345678901234";
const MIN = 60_000;
const HOUR = 60 * MIN;

/** Graph's answer for these values, in Meta's shape. */
const metaAnswer = (values: Record<string, unknown>) => ({
  data: Object.entries(values).map(([name, value]) => ({
    name,
    period: "lifetime",
    values: [{ value }],
    title: name,
    description: `About ${name}`,
    id: `${MEDIA}/insights/${name}/lifetime`,
  })),
});

describe("reading Graph's insights answer", () => {
  it("gives each metric's value by name", () => {
    const values = { views: 1234, reach: 900, likes: 80, comments: 4, shares: 6, saved: 3, total_interactions: 93 };
    expect(parseInsightsAnswer(metaAnswer({ ...values, ig_reels_avg_watch_time: 5120 }), MEDIA)).toEqual({
      ...values,
      ig_reels_avg_watch_time: 5120,
    });
  });

  it("answers null for an empty data, Graph's 'nothing yet' while its figures lag: never zeros", () => {
    expect(parseInsightsAnswer({ data: [] }, MEDIA)).toBeNull();
  });

  it("reads numbers sent as strings and the total_value form, and skips metrics Dispatch does not show or values that are not counts", () => {
    const body = {
      data: [
        { name: "views", values: [{ value: "77" }] },
        { name: "reach", total_value: { value: 50 } },
        { name: "ig_reels_video_view_total_time", values: [{ value: 99 }] },
        { name: "likes", values: [{ value: -1 }] },
        { name: "saved", values: [{ value: "many" }] },
        { nope: true },
      ],
    };
    expect(parseInsightsAnswer(body, MEDIA)).toEqual({ views: 77, reach: 50 });
  });

  it("refuses an answer without a data array as not Graph's, naming the path and not the token", () => {
    for (const body of [{}, "<html>", { data: {} }, null]) {
      const error = (() => {
        try {
          parseInsightsAnswer(body, MEDIA);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(GraphTransportError);
      expect((error as Error).message).toBe(`GET /${MEDIA}/insights answered without a data array`);
    }
  });
});

describe("when a reel's insights are read again", () => {
  const published = Date.parse("2030-01-01T00:00:00Z");

  it("on view: at once for a reel never read, then no sooner than 15 minutes after the last reading", () => {
    const never = { attempted_at: 0, published_at: published };
    expect(readingDue(never, published + 1000, ON_VIEW)).toBe(true);
    const read = { attempted_at: published + MIN, published_at: published };
    expect(readingDue(read, published + MIN + 15 * MIN - 1, ON_VIEW)).toBe(false);
    expect(readingDue(read, published + MIN + 15 * MIN, ON_VIEW)).toBe(true);
    expect(nextReadingAt(read, ON_VIEW)).toBe(published + 16 * MIN);
  });

  it("by the daily sweep: a day after publishing first (Graph has figures by then), then a day after each reading", () => {
    const never = { attempted_at: 0, published_at: published };
    expect(readingDue(never, published + 23 * HOUR, DAILY_SWEEP)).toBe(false);
    expect(readingDue(never, published + 24 * HOUR, DAILY_SWEEP)).toBe(true);
    const viewed = { attempted_at: published + 30 * HOUR, published_at: published };
    expect(readingDue(viewed, published + 53 * HOUR, DAILY_SWEEP)).toBe(false);
    expect(readingDue(viewed, published + 54 * HOUR, DAILY_SWEEP)).toBe(true);
  });
});

describe("a missing insights permission", () => {
  it.each([
    [10, true],
    [200, true],
    [299, true],
    [100, false],
    [190, false],
    [300, false],
  ])("code %i: %s", (code, missing) => {
    expect(isMissingPermission(new GraphError({ code, message: "x" }))).toBe(missing);
  });
});

describe("the sandbox's seeded insights", () => {
  const ages = [0, 5_000, MIN, HOUR, 6 * HOUR, 24 * HOUR, 7 * 24 * HOUR, 30 * 24 * HOUR];

  it("are a pure function of the media id and the age", () => {
    expect(seededInsights(MEDIA, 3 * HOUR)).toEqual(seededInsights(MEDIA, 3 * HOUR));
    expect(seededInsights(MEDIA, 3 * HOUR)).not.toEqual(seededInsights("17912345678901235", 3 * HOUR));
  });

  it("start at nothing, have viewers within seconds, and never fall as the reel ages", () => {
    expect(seededInsights(MEDIA, 0).views).toBe(0);
    expect(seededInsights(MEDIA, 5_000).views).toBeGreaterThan(0);
    for (const id of [MEDIA, "17900000000000001", "17999999999999999"]) {
      const series = ages.map((age) => seededInsights(id, age));
      for (let i = 1; i < series.length; i++)
        for (const metric of REEL_INSIGHT_METRICS)
          expect(series[i][metric], `${id} ${metric} at ${ages[i]}`).toBeGreaterThanOrEqual(series[i - 1][metric]);
    }
  });

  it("hang together as Instagram's do: views ≥ reach ≥ interactions, which are the sum of their parts", () => {
    for (const age of ages.slice(1)) {
      const s = seededInsights(MEDIA, age);
      expect(s.views).toBeGreaterThanOrEqual(s.reach);
      expect(s.reach).toBeGreaterThanOrEqual(s.total_interactions);
      expect(s.total_interactions).toBe(s.likes + s.comments + s.shares + s.saved);
      expect(s.ig_reels_avg_watch_time).toBeGreaterThanOrEqual(2500);
      expect(s.ig_reels_video_view_total_time).toBe(s.views * s.ig_reels_avg_watch_time);
    }
  });
});

describe("the metrics the sandbox takes", () => {
  const refusal = (raw: string | undefined) => {
    try {
      requestedMetrics(raw);
    } catch (error) {
      return error as GraphError;
    }
    throw new Error(`${raw} was taken`);
  };

  it("takes Graph's current names, in the order asked, once each", () => {
    expect(requestedMetrics("views, reach,views,ig_reels_avg_watch_time")).toEqual([
      "views",
      "reach",
      "ig_reels_avg_watch_time",
    ]);
  });

  it.each(DEPRECATED_INSIGHT_METRICS)(
    "refuses %s, retired in v22.0, with error 100 listing the valid metrics, as Meta does",
    (metric) => {
      const error = refusal(`views,${metric}`);
      expect(error).toBeInstanceOf(GraphError);
      expect([error.code, error.status]).toEqual([100, 400]);
      expect(error.message).toBe(
        "(#100) metric[1] must be one of the following values: views, reach, likes, comments, shares, saved, total_interactions, ig_reels_avg_watch_time, ig_reels_video_view_total_time",
      );
    },
  );

  it("refuses an unknown metric or none at all with error 100", () => {
    expect(refusal("views,followers").code).toBe(100);
    expect(refusal("views,followers").message).toContain("metric[1] must be one of");
    expect(refusal(undefined).code).toBe(100);
    expect(refusal(" , ").message).toContain("metric is required");
  });
});
