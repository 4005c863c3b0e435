import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "@/lib/json-depth";

const nested = (depth: number, open = "[", close = "]") => `${open.repeat(depth)}${close.repeat(depth)}`;

describe("nestsDeeperThan", () => {
  it("lets a body nest exactly MAX_JSON_DEPTH levels and refuses one more", () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).toBe(false);
    expect(nestsDeeperThan(`{"a":${nested(MAX_JSON_DEPTH)}}`)).toBe(true);
  });

  it("counts objects and arrays alike, deep as the red team sent them (5,000 and 40,000 levels)", () => {
    expect(nestsDeeperThan(`{"model":"m","input":"x","text":${nested(5000)}}`)).toBe(true);
    expect(nestsDeeperThan(`${'{"a":'.repeat(40_000)}1${"}".repeat(40_000)}`)).toBe(true);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ prompt: "[".repeat(500), quoted: `\\"${"{".repeat(500)}"`, list: [[1]] });
    expect(nestsDeeperThan(text)).toBe(false);
    expect(nestsDeeperThan(`["\\\\", ${nested(MAX_JSON_DEPTH)}]`)).toBe(true);
  });

  it("counts depth, not bracket pairs: many shallow siblings pass", () => {
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 10_000 }, () => [[1]])))).toBe(false);
  });
});
