import { describe, expect, it } from "vitest";
import { isRateLimitCode, readGraphUsage } from "@/lib/graph/usage";

describe("Graph's rate-limit signals", () => {
  it.each([4, 17, 32, 613, 80002])("code %i is a rate limit", (code) => expect(isRateLimitCode(code)).toBe(true));
  it.each([1, 2, 9, 10, 190])("code %i is not", (code) => expect(isRateLimitCode(code)).toBe(false));
  it("4/2207051 is a spam restriction, not a rate limit", () => expect(isRateLimitCode(4, 2207051)).toBe(false));

  it("reads the highest share and the longest wait from both headers", () => {
    const headers = new Headers({
      "x-app-usage": JSON.stringify({ call_count: 12, total_cputime: 3, total_time: 40 }),
      "x-business-use-case-usage": JSON.stringify({
        "17841400000000001": [
          { type: "instagram", call_count: 100, total_cputime: 20, total_time: 30, estimated_time_to_regain_access: 7 },
          { type: "pages", call_count: 5, estimated_time_to_regain_access: 0 },
        ],
      }),
    });
    expect(readGraphUsage(headers)).toEqual({
      percent: 100,
      regainAccessMs: 7 * 60_000,
      app: { percent: 40 },
      accounts: { "17841400000000001": { percent: 100, regainAccessMs: 7 * 60_000 } },
    });
  });

  it("is undefined without the headers, and ignores ones that do not parse", () => {
    expect(readGraphUsage(new Headers())).toBeUndefined();
    expect(readGraphUsage(new Headers({ "x-app-usage": "not json" }))).toBeUndefined();
    expect(readGraphUsage(new Headers({ "x-app-usage": JSON.stringify({ call_count: "n/a" }) }))).toEqual({
      percent: 0,
      regainAccessMs: 0,
      app: { percent: 0 },
      accounts: {},
    });
  });
});
