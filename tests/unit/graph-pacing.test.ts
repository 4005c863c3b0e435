import { describe, expect, it } from "vitest";
import { createGraphPacer, paceKeys, readPace } from "@/lib/graph/pacing";
import type { GraphUsage } from "@/lib/graph/usage";
import { realRedisPerFile } from "./real-redis";

/** The pacer over a real Redis (its Lua scripts are the point), with a clock the test moves. */

const redis = realRedisPerFile();
let next = 0;
const newAccount = () => `178414${String(++next).padStart(11, "0")}`;

function pacer(options: { spacingMs?: number; blockMs?: number } = {}) {
  const clock = { now: 1_900_000_000_000 };
  return {
    clock,
    pacer: createGraphPacer(redis(), { spacingMs: 1000, blockMs: 60_000, ...options, now: () => clock.now }),
  };
}

const usage = (accountId: string, percent: number, regainAccessMs = 0, app?: number): GraphUsage => ({
  percent: Math.max(percent, app ?? 0),
  regainAccessMs,
  ...(app === undefined ? {} : { app: { percent: app } }),
  accounts: { [accountId]: { percent, regainAccessMs } },
});

describe("the Graph pacer", () => {
  it("lets calls go at once below 80 %", async () => {
    const { pacer: p } = pacer();
    const id = newAccount();
    await p.after(id, usage(id, 79));
    for (let i = 0; i < 3; i++) expect(await p.before(id)).toEqual({ holdMs: 0 });
  });

  it("above 80 % spaces an account's calls, the more the nearer 100 %", async () => {
    const { pacer: p } = pacer();
    const id = newAccount();
    await p.after(id, usage(id, 90));
    // At 90 %: half of spacingMs between calls, each holding for the slot before it.
    expect([await p.before(id), await p.before(id), await p.before(id)]).toEqual([
      { holdMs: 0 },
      { holdMs: 500 },
      { holdMs: 1000 },
    ]);
    const near = newAccount();
    await p.after(near, usage(near, 99));
    expect([await p.before(near), await p.before(near)]).toEqual([{ holdMs: 0 }, { holdMs: 950 }]);
    // Another account is not held by this one's usage.
    expect(await p.before(newAccount())).toEqual({ holdMs: 0 });
  });

  it("pauses calls at 100 % or while Graph names a time to regain access, then lets them go", async () => {
    const { pacer: p, clock } = pacer();
    const id = newAccount();
    await p.after(id, usage(id, 100));
    expect(await p.before(id)).toEqual({ pausedUntil: clock.now + 60_000, scope: "account" });
    expect(await readPace(redis(), id, clock.now)).toEqual({ pausedUntil: clock.now + 60_000, percent: 100 });

    const regain = newAccount();
    await p.after(regain, usage(regain, 40, 7 * 60_000));
    expect(await p.before(regain)).toEqual({ pausedUntil: clock.now + 7 * 60_000, scope: "account" });
    clock.now += 7 * 60_000;
    expect(await p.before(regain)).toEqual({ holdMs: 0 });
    expect((await readPace(redis(), regain, clock.now)).pausedUntil).toBeNull();
  });

  it("a rate-limit refusal blocks the account (code 4: the app) even without headers", async () => {
    const { pacer: p, clock } = pacer();
    const id = newAccount();
    await p.after(id, undefined, { rateLimitCode: 80002 });
    expect(await p.before(id)).toEqual({ pausedUntil: clock.now + 60_000, scope: "account" });
    expect(await p.before(newAccount())).toEqual({ holdMs: 0 });
    try {
      await p.after(id, undefined, { rateLimitCode: 4 });
      expect(await p.before(newAccount())).toEqual({ pausedUntil: clock.now + 60_000, scope: "app" });
    } finally {
      await redis().del(paceKeys.app);
    }
  });

  it("a user's or Page's rate-limit refusal of a call made for none of Dispatch's accounts (a login's) blocks no one", async () => {
    const { pacer: p } = pacer();
    for (const code of [17, 32, 613, 80002]) await p.after(null, undefined, { rateLimitCode: code });
    expect(await p.before(newAccount())).toEqual({ holdMs: 0 });
    expect(await p.before(null)).toEqual({ holdMs: 0 });
  });

  it("keeps the app's reading apart from the accounts', and counts a Page's figures for the account that called", async () => {
    const { pacer: p } = pacer();
    const id = newAccount();
    const page = newAccount();
    try {
      await p.after(id, {
        percent: 85,
        regainAccessMs: 0,
        app: { percent: 85 },
        accounts: { [page]: { percent: 10, regainAccessMs: 0 } },
      });
      // The app at 85 %: every account's calls are spaced.
      const other = newAccount();
      expect([await p.before(other), (await p.before(other)) as { holdMs: number }]).toEqual([
        { holdMs: 0 },
        { holdMs: 250 },
      ]);
      expect(await redis().hget(paceKeys.account(id), "percent")).toBe("10");
    } finally {
      await redis().del(paceKeys.app);
    }
  });
});
