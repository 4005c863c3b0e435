import { describe, expect, it } from "vitest";
import { CandidateSpread, type Counts } from "@/lib/jobs/providers/candidate-spread";
import { sampleToken } from "@/lib/jobs/providers/local-ngram";

/** A seeded generator (Lehmer), so a failing case can be replayed. */
function seeded(seed: number) {
  let state = seed;
  return () => (state = (state * 48271) % 2147483647) / 2147483647;
}

/** Counts over tokens 0..span-1 with few distinct values, so equal counts (ties) are common. */
function randomCounts(random: () => number, size: number, span: number): Counts {
  const counts: Counts = new Map();
  while (counts.size < size) counts.set(Math.floor(random() * span), 1 + Math.floor(random() * 4) ** 2);
  return counts;
}

function filtered(counts: Counts, allowed?: (token: number) => boolean): Counts | undefined {
  if (!allowed) return counts;
  const kept: Counts = new Map([...counts].filter(([token]) => allowed(token)));
  return kept.size ? kept : undefined;
}

describe("a context's candidate spread", () => {
  it("draws what sampleToken draws from the corpus's and the prompt's counts merged, at every temperature", () => {
    const random = seeded(7);
    const filters = [undefined, (token: number) => token % 3 !== 0];
    let cases = 0;
    for (let round = 0; round < 300; round++) {
      const base = randomCounts(random, 1 + Math.floor(random() * 200), 400);
      // The prompt's counts: some tokens the corpus has at this context, some it does not; sometimes none.
      const prompt = round % 5 === 0 ? undefined : randomCounts(random, 1 + Math.floor(random() * 12), 500);
      for (const allowed of filters) {
        const overlay = prompt && filtered(prompt, allowed);
        for (const temperature of [0, 0.2, 0.7, 1, 1.7]) {
          const spread = new CandidateSpread(base, allowed, temperature);
          const merged = [filtered(base, allowed), overlay].filter((c): c is Counts => !!c);
          if (!spread.size) continue;
          for (let draw = 0; draw < 20; draw++) {
            const u = draw === 0 ? 0 : draw === 1 ? 0.9999999999 : random();
            expect(spread.sample(overlay, temperature, () => u)).toBe(sampleToken(merged, temperature, () => u));
            cases++;
          }
        }
      }
    }
    expect(cases).toBeGreaterThan(40_000);
  });

  it("leaves out the tokens its filter refuses, and is empty when it refuses all", () => {
    const counts: Counts = new Map([
      [1, 5],
      [2, 9],
      [3, 1],
    ]);
    const odd = new CandidateSpread(counts, (token) => token % 2 === 1, 0);
    expect(odd.size).toBe(2);
    expect(odd.sample(undefined, 0, Math.random)).toBe(1);
    expect(new CandidateSpread(counts, () => false, 1).size).toBe(0);
  });

  it("lets the prompt's counts change the greedy pick: an added count, a token of its own, a tie kept by order", () => {
    const counts: Counts = new Map([
      [10, 4],
      [11, 6],
    ]);
    const spread = new CandidateSpread(counts, undefined, 0);
    expect(spread.sample(undefined, 0, Math.random)).toBe(11);
    expect(spread.sample(new Map([[10, 3]]), 0, Math.random)).toBe(10);
    expect(spread.sample(new Map([[12, 7]]), 0, Math.random)).toBe(12);
    // 10 reaches 6 as well: the earlier of equals wins, as in the corpus's order.
    expect(spread.sample(new Map([[10, 2]]), 0, Math.random)).toBe(10);
    expect(spread.sample(new Map([[12, 6]]), 0, Math.random)).toBe(11);
  });
});
