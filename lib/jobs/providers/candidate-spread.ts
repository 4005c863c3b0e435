export type Counts = Map<number, number>;

/**
 * One context's candidates from the shipped corpus, laid out once so that a token can be drawn
 * from them, plus the prompt's counts for the same context, without merging maps or raising every
 * count to the temperature's power on every token. A prompt outside the corpus backs off to
 * contexts with thousands of candidates (the unigrams), and doing that work per token cost
 * ~0.17 ms a token. Draws are those `sampleToken` makes from the two counts merged: the same
 * candidates in the same order (the corpus's, then the prompt's own), the same weights.
 */
export class CandidateSpread {
  private readonly tokens: number[] = [];
  private readonly counts: number[] = [];
  private readonly position = new Map<number, number>();
  /** count^(1/temperature) and its running sum, in order (temperature > 0). */
  private readonly weights: number[] = [];
  private readonly cumulative: number[] = [];
  /** Positions by count, highest first, the earlier first among equals (temperature 0). */
  private readonly ranked: number[] = [];

  constructor(counts: Counts, allowed: ((token: number) => boolean) | undefined, temperature: number) {
    const exponent = 1 / temperature;
    let total = 0;
    for (const [token, n] of counts) {
      if (allowed && !allowed(token)) continue;
      this.position.set(token, this.tokens.length);
      this.tokens.push(token);
      this.counts.push(n);
      if (temperature > 0) {
        const w = Math.pow(n, exponent);
        this.weights.push(w);
        this.cumulative.push((total += w));
      }
    }
    if (temperature <= 0) {
      this.ranked = this.tokens.map((_, i) => i);
      this.ranked.sort((a, b) => this.counts[b] - this.counts[a] || a - b);
    }
  }

  get size(): number {
    return this.tokens.length;
  }

  /** A token from these counts with `overlay`'s added (its tokens not among them come after). */
  sample(overlay: Counts | undefined, temperature: number, random: () => number): number {
    return temperature <= 0 ? this.greedy(overlay) : this.draw(overlay, temperature, random);
  }

  /** The highest merged count; the first in order among equals. */
  private greedy(overlay: Counts | undefined): number {
    let best = -1;
    let bestCount = -1;
    let bestAt = Infinity;
    for (const at of this.ranked) {
      if (overlay?.has(this.tokens[at])) continue;
      [best, bestCount, bestAt] = [this.tokens[at], this.counts[at], at];
      break;
    }
    let beyond = this.tokens.length;
    for (const [token, n] of overlay ?? []) {
      const on = this.position.get(token);
      const [at, count] = on === undefined ? [beyond++, n] : [on, this.counts[on] + n];
      if (count > bestCount || (count === bestCount && at < bestAt)) [best, bestCount, bestAt] = [token, count, at];
    }
    return best;
  }

  /** The first candidate whose running sum of merged weights reaches random() × their total. */
  private draw(overlay: Counts | undefined, temperature: number, random: () => number): number {
    const exponent = 1 / temperature;
    const last = this.tokens.length - 1;
    let total = this.cumulative[last];
    // The overlay's tokens change the weight at their position, or come after all of these.
    const shifts: [at: number, by: number][] = [];
    const after: [token: number, weight: number][] = [];
    for (const [token, n] of overlay ?? []) {
      const at = this.position.get(token);
      if (at === undefined) {
        const w = Math.pow(n, exponent);
        after.push([token, w]);
        total += w;
      } else {
        const by = Math.pow(this.counts[at] + n, exponent) - this.weights[at];
        shifts.push([at, by]);
        total += by;
      }
    }
    shifts.sort((a, b) => a[0] - b[0]);
    const r = random() * total;
    let offset = 0;
    let from = 0;
    for (const [at, by] of shifts) {
      const found = this.firstReaching(r - offset, from, at);
      if (found >= 0) return this.tokens[found];
      offset += by;
      if (this.cumulative[at] + offset >= r) return this.tokens[at];
      from = at + 1;
    }
    const found = this.firstReaching(r - offset, from, last + 1);
    if (found >= 0) return this.tokens[found];
    let sum = this.cumulative[last] + offset;
    for (const [token, w] of after) if ((sum += w) >= r) return token;
    return after.length ? after[after.length - 1][0] : this.tokens[last];
  }

  /** The first position in [from, to) whose running sum is at least `target`, or -1. */
  private firstReaching(target: number, from: number, to: number): number {
    if (from >= to || this.cumulative[to - 1] < target) return -1;
    let [lo, hi] = [from, to - 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid] >= target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
