/**
 * A mergeable histogram: counts per bucket of fixed boundaries, the same for every job, worker and
 * hour, so the counts of any range add up bucket by bucket and a percentile read from the sum is
 * the percentile of the range (not an average of hourly percentiles).
 *
 * Ten buckets per decade from 0.1 to 10⁸ (each bound about 1.26× the one before, rounded to three
 * figures so the bounds read well and compare exactly): a percentile is known to within one bucket,
 * about ±13 % of its value. The same bounds serve milliseconds (time to first token, submit to
 * live: up to 27 h) and tokens per second.
 */
export const HISTOGRAM_BOUNDS: readonly number[] = Array.from({ length: 91 }, (_, k) =>
  Number((10 ** ((k - 10) / 10)).toPrecision(3)),
);

/** Bucket i holds values in [bound(i-1), bound(i)): bucket 0 everything below 0.1, the last everything from 10⁸ up. */
export const HISTOGRAM_BUCKETS = HISTOGRAM_BOUNDS.length + 1;

export type Histogram = number[];

export const emptyHistogram = (): Histogram => new Array<number>(HISTOGRAM_BUCKETS).fill(0);

/** The bucket a value falls in (binary search over the bounds: no floating-point logarithm at an exact bound). */
export function bucketOf(value: number): number {
  let low = 0;
  let high = HISTOGRAM_BOUNDS.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (value < HISTOGRAM_BOUNDS[mid]) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** The values bucket `index` holds: [lower, upper); the last bucket has no upper bound. */
export function bucketRange(index: number): { lower: number; upper: number } {
  return {
    lower: index === 0 ? 0 : HISTOGRAM_BOUNDS[index - 1],
    upper: index < HISTOGRAM_BOUNDS.length ? HISTOGRAM_BOUNDS[index] : Infinity,
  };
}

/** Adds `from`'s counts into `into`, bucket by bucket. */
export function mergeInto(into: Histogram, from: Histogram): Histogram {
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) into[i] += from[i] ?? 0;
  return into;
}

export const countOf = (histogram: Histogram): number => histogram.reduce((sum, n) => sum + n, 0);

/**
 * The p-th percentile (0 < p ≤ 1) by nearest rank: the value of rank ⌈p·n⌉, estimated inside the
 * bucket that holds that rank, as if its values were spread evenly over it (each at the middle of
 * its share), so the estimate is in the same bucket as the exact value. Null for an empty
 * histogram. The open last bucket answers its lower bound.
 */
export function percentile(histogram: Histogram, p: number): number | null {
  const total = countOf(histogram);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let below = 0;
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) {
    const count = histogram[i] ?? 0;
    if (count > 0 && below + count >= rank) {
      const { lower, upper } = bucketRange(i);
      if (upper === Infinity) return lower;
      return lower + ((upper - lower) * (rank - below - 0.5)) / count;
    }
    below += count;
  }
  return null;
}
