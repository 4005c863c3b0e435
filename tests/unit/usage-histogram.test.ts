import { describe, expect, it } from "vitest";
import {
  bucketOf,
  bucketRange,
  countOf,
  emptyHistogram,
  HISTOGRAM_BOUNDS,
  HISTOGRAM_BUCKETS,
  mergeInto,
  percentile,
  type Histogram,
} from "@/lib/usage/histogram";
import { bucketStart, bucketStarts } from "@/lib/usage/usage-keys";

const histogramOf = (values: number[]): Histogram => {
  const h = emptyHistogram();
  for (const v of values) h[bucketOf(v)]++;
  return h;
};

/** Nearest rank, as the histogram estimates it. */
const exactPercentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.max(1, Math.ceil(p * values.length)) - 1];

/** A small seeded generator, so a failure can be replayed. */
function seeded(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe("histogram bounds", () => {
  it("are ten a decade from 0.1 to 10⁸, rising, three significant figures", () => {
    expect(HISTOGRAM_BOUNDS[0]).toBe(0.1);
    expect(HISTOGRAM_BOUNDS[10]).toBe(1);
    expect(HISTOGRAM_BOUNDS.slice(10, 21)).toEqual([1, 1.26, 1.58, 2, 2.51, 3.16, 3.98, 5.01, 6.31, 7.94, 10]);
    expect(HISTOGRAM_BOUNDS.at(-1)).toBe(1e8);
    expect(HISTOGRAM_BUCKETS).toBe(92);
    for (let i = 1; i < HISTOGRAM_BOUNDS.length; i++)
      expect(HISTOGRAM_BOUNDS[i]).toBeGreaterThan(HISTOGRAM_BOUNDS[i - 1]);
  });

  it("put a value at a bound in the bucket above it, and just under it in the one below", () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(0.0999)).toBe(0);
    expect(bucketOf(0.1)).toBe(1);
    expect(bucketOf(1000)).toBe(41);
    expect(bucketOf(999.999)).toBe(40);
    expect(bucketRange(41)).toEqual({ lower: 1000, upper: 1260 });
    expect(bucketOf(1e8)).toBe(HISTOGRAM_BUCKETS - 1);
    expect(bucketOf(1e12)).toBe(HISTOGRAM_BUCKETS - 1);
    expect(bucketRange(HISTOGRAM_BUCKETS - 1)).toEqual({ lower: 1e8, upper: Infinity });
    expect(bucketRange(0)).toEqual({ lower: 0, upper: 0.1 });
  });

  it("hold every value inside its bucket's range", () => {
    const random = seeded(7);
    for (let i = 0; i < 2000; i++) {
      const value = 10 ** (random() * 10 - 2);
      const { lower, upper } = bucketRange(bucketOf(value));
      expect(value).toBeGreaterThanOrEqual(lower);
      expect(value).toBeLessThan(upper);
    }
  });
});

describe("percentiles", () => {
  it("are null for an empty histogram", () => {
    expect(percentile(emptyHistogram(), 0.5)).toBeNull();
  });

  it("of one value are the middle of that value's bucket", () => {
    const { lower, upper } = bucketRange(bucketOf(42));
    expect(percentile(histogramOf([42]), 0.5)).toBeCloseTo((lower + upper) / 2, 9);
  });

  it("answer the open last bucket's lower bound", () => {
    expect(percentile(histogramOf([5e9, 6e9]), 0.95)).toBe(1e8);
  });

  it("lie in the bucket of the exact nearest-rank value, for skewed samples", () => {
    const random = seeded(11);
    for (let round = 0; round < 50; round++) {
      const values = Array.from({ length: 1 + Math.floor(random() * 400) }, () => Math.exp(random() * 8));
      const h = histogramOf(values);
      for (const p of [0.5, 0.95, 0.99])
        expect(bucketOf(percentile(h, p)!), `p${p * 100} of ${values.length} values`).toBe(
          bucketOf(exactPercentile(values, p)),
        );
    }
  });
});

describe("merging", () => {
  it("adds bucket by bucket, so the merged percentile is the percentile of all the values", () => {
    const hours = [
      [10, 11, 12, 13],
      [500, 600, 700],
      [20, 9000],
    ];
    const merged = hours.map(histogramOf).reduce((into, h) => mergeInto(into, h), emptyHistogram());
    const all = hours.flat();
    expect(merged).toEqual(histogramOf(all));
    expect(countOf(merged)).toBe(all.length);
    const exact = exactPercentile(all, 0.5);
    expect(bucketOf(percentile(merged, 0.5)!)).toBe(bucketOf(exact));
    // Averaging the hours' medians would say something else entirely.
    const averageOfMedians = hours.map((h) => exactPercentile(h, 0.5)).reduce((a, b) => a + b) / hours.length;
    expect(bucketOf(averageOfMedians)).not.toBe(bucketOf(exact));
  });

  it("leaves the source untouched and tolerates a short array", () => {
    const source = histogramOf([1, 2]);
    const copy = [...source];
    const into = mergeInto(emptyHistogram(), source);
    expect(source).toEqual(copy);
    expect(mergeInto(into, [3])[0]).toBe(3);
  });
});

describe("time buckets", () => {
  const at = Date.parse("2026-11-26T13:45:12.345Z");

  it("start at the UTC hour and day", () => {
    expect(new Date(bucketStart(at, "hour")).toISOString()).toBe("2026-11-26T13:00:00.000Z");
    expect(new Date(bucketStart(at, "day")).toISOString()).toBe("2026-11-26T00:00:00.000Z");
    expect(bucketStart(Date.parse("2026-11-26T13:00:00Z"), "hour")).toBe(Date.parse("2026-11-26T13:00:00Z"));
  });

  it("list every bucket that overlaps the range, the end excluded", () => {
    const from = Date.parse("2026-11-26T10:30:00Z");
    expect(
      bucketStarts(from, Date.parse("2026-11-26T13:00:00Z"), "hour").map((t) => new Date(t).toISOString()),
    ).toEqual(["2026-11-26T10:00:00.000Z", "2026-11-26T11:00:00.000Z", "2026-11-26T12:00:00.000Z"]);
    expect(bucketStarts(from, Date.parse("2026-11-26T13:00:01Z"), "hour")).toHaveLength(4);
    expect(bucketStarts(from, Date.parse("2026-11-28T00:00:00Z"), "day")).toHaveLength(2);
  });
});
