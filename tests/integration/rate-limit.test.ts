import { randomUUID } from "node:crypto";
import Redis from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { enforceRateLimit } from "@/lib/web/rate-limit";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

async function outcome(tenant: string, perMinute: number, now: number) {
  try {
    await enforceRateLimit(redis, tenant, "submit", perMinute, now);
    return "ok";
  } catch (error) {
    return `${(error as ApiError).status} ${(error as ApiError).headers["Retry-After"]}`;
  }
}

describe("per-tenant rate limit", () => {
  it("allows a minute's burst, then one request per interval, with Retry-After", async () => {
    const tenant = `t-${randomUUID()}`;
    const t0 = 1_000_000;
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await outcome(tenant, 6, t0));
    expect(results).toEqual(["ok", "ok", "ok", "ok", "ok", "ok", "429 10"]);
    expect(await outcome(tenant, 6, t0 + 9_000)).toBe("429 1");
    expect(await outcome(tenant, 6, t0 + 10_000)).toBe("ok");
    expect(await outcome(tenant, 6, t0 + 10_001)).toMatch(/^429/);
  });

  it("keeps tenants apart, and 0 turns it off", async () => {
    const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    for (let i = 0; i < 2; i++) await outcome(a, 2, 5_000_000);
    expect(await outcome(a, 2, 5_000_000)).toMatch(/^429/);
    expect(await outcome(b, 2, 5_000_000)).toBe("ok");
    for (let i = 0; i < 50; i++) expect(await outcome(a, 0, 5_000_000)).toBe("ok");
  });
});
