import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { refreshAccountToken, type TokenRefreshDeps } from "@/lib/accounts/token-refresh/refresh-account-token";
import {
  readTokenRefresh,
  scheduleTokenRefresh,
  tokenRefreshKeys,
} from "@/lib/accounts/token-refresh/token-refresh-queue";
import { createGraphPacer, readPace } from "@/lib/graph/pacing";
import { readGraphUsage } from "@/lib/graph/usage";
import type { WebhookEventType } from "@/lib/webhooks/events";
import { webhookKeys } from "@/lib/webhooks/keys";
import { createWebhook } from "@/lib/webhooks/store";
import { realRedisPerFile } from "./real-redis";

const redis = realRedisPerFile();
const GRAPH = "https://graph.instagram.test";
const HOUR_MS = 3_600_000;

/** Instagram's answer to a refresh of a token it no longer takes. */
const refused190 = () =>
  Response.json(
    { error: { message: "Error validating access token", type: "OAuthException", code: 190, fbtrace_id: "A1" } },
    { status: 400 },
  );

/** Instagram's refusal of a refresh for its rate limit (80002), with the account's usage header naming when access comes back. */
const rateLimited = (accountId: string, regainMinutes: number) =>
  Response.json(
    { error: { message: "Application request limit reached", type: "IGApiException", code: 80002, fbtrace_id: "A2" } },
    { status: 400, headers: businessUsage(accountId, 100, regainMinutes) },
  );

/** X-Business-Use-Case-Usage for one Instagram account, as Meta sends it. */
const businessUsage = (accountId: string, percent: number, regainMinutes = 0) => ({
  "x-business-use-case-usage": JSON.stringify({
    [accountId]: [
      {
        type: "instagram",
        call_count: percent,
        total_cputime: 1,
        total_time: 1,
        estimated_time_to_regain_access: regainMinutes,
      },
    ],
  }),
});

/** An Instagram-login account whose token expires within the hour (or `expiresInMs`): due for a refresh now. */
async function connectExpiring(
  accounts: ConnectedAccounts,
  accountId: string,
  token: string,
  tenantId = "acme",
  expiresInMs = HOUR_MS,
) {
  const account = await accounts.connect({
    tenantId,
    accountId,
    accessToken: token,
    login: "instagram",
    graphUrl: GRAPH,
    tokenExpiresAt: new Date(Date.now() + expiresInMs).toISOString(),
  });
  if (account === "taken") throw new Error("taken");
  await scheduleTokenRefresh(redis(), accountId, Date.now());
  return account;
}

function deps(accounts: ConnectedAccounts, fetch: typeof globalThis.fetch): TokenRefreshDeps {
  return {
    redis: redis(),
    accounts,
    fetch,
    pacer: createGraphPacer(redis()),
    version: "v23.0",
    graphUrl: GRAPH,
    instagramGraphUrl: GRAPH,
    refreshBeforeMs: 10 * 86_400_000,
    retryMs: 60_000,
    log: () => {},
    now: Date.now,
  };
}

describe("a token refresh that loses to a reconnect", () => {
  it("keeps the account connected again while the old token's refresh was out on the schedule, when Instagram then refuses the old token", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001001";
    await connectExpiring(accounts, id, "old-token-secret");
    // The user reconnects through Instagram Login while the refresh of the old token is out.
    const outcome = await refreshAccountToken(
      deps(accounts, async () => {
        await connectExpiring(accounts, id, "new-token-secret");
        return refused190();
      }),
      id,
    );
    expect(outcome).toBe("needs_reconnect");
    expect(await accounts.findById(id)).toMatchObject({ status: "connected", accessToken: "new-token-secret" });
    expect(await redis().zscore(tokenRefreshKeys.due, id)).not.toBeNull();
  });

  it("takes an account whose refused token is still its own off the schedule", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001002";
    await connectExpiring(accounts, id, "refused-token-secret");
    expect(
      await refreshAccountToken(
        deps(accounts, async () => refused190()),
        id,
      ),
    ).toBe("needs_reconnect");
    expect(await accounts.findById(id)).toMatchObject({ status: "needs_reconnect" });
    expect(await redis().zscore(tokenRefreshKeys.due, id)).toBeNull();
  });

  it("keeps an account connected after the schedule read it as gone, and drops one that stays gone", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const gone = "17841400000001003";
    await scheduleTokenRefresh(redis(), gone, Date.now());
    expect(await refreshAccountToken(deps(accounts, fetch), gone)).toBe("dropped");
    expect(await redis().zscore(tokenRefreshKeys.due, gone)).toBeNull();

    // Read as disconnected; connected again (and scheduled) before the drop: it stays on the schedule.
    const back = "17841400000001004";
    await connectExpiring(accounts, back, "back-token-secret");
    await accounts.disconnect("acme", back);
    const racing = new ConnectedAccounts(redis(), randomBytes(32), []);
    const findById = racing.findById.bind(racing);
    racing.findById = async (accountId) => {
      const read = await findById(accountId);
      await connectExpiring(accounts, back, "reconnected-token-secret");
      return read;
    };
    expect(await refreshAccountToken(deps(racing, fetch), back)).toBe("dropped");
    expect(await redis().zscore(tokenRefreshKeys.due, back)).not.toBeNull();
  });
});

describe("a token refresh and Graph's rate limits", () => {
  it("comes back after a refusal for a rate limit no sooner than Graph's estimated time to regain access, and holds the account's calls until then", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001101";
    await connectExpiring(accounts, id, "limited-token-secret");
    const before = Date.now();
    expect(
      await refreshAccountToken(
        deps(accounts, async () => rateLimited(id, 30)),
        id,
      ),
    ).toBe("retrying");
    // 30 minutes, not retryMs (one minute here).
    expect(Number(await redis().zscore(tokenRefreshKeys.due, id))).toBeGreaterThanOrEqual(before + 30 * 60_000);
    // The publishing calls' pacer learnt it too: the account's calls wait as long.
    const pace = await readPace(redis(), id, Date.now());
    expect(pace.pausedUntil).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(await accounts.findById(id)).toMatchObject({ status: "connected", accessToken: "limited-token-secret" });
  });

  it("is not sent while the pacer holds the account's calls back, and comes back when the pause ends", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001102";
    // Three days left: due (TOKEN_REFRESH_BEFORE_S here is 10 days), and more than a day after the pause.
    await connectExpiring(accounts, id, "paused-token-secret", "acme", 3 * 86_400_000);
    // A publishing call's answer named 20 minutes to regain access for the account.
    await createGraphPacer(redis()).after(id, readGraphUsage(new Headers(businessUsage(id, 100, 20))));
    const { pausedUntil } = await readPace(redis(), id, Date.now());
    expect(pausedUntil).not.toBeNull();
    let calls = 0;
    const outcome = await refreshAccountToken(
      deps(accounts, async () => {
        calls++;
        return Response.json({ access_token: "new-token-secret", token_type: "bearer", expires_in: 5_183_944 });
      }),
      id,
    );
    expect(outcome).toBe("retrying");
    expect(calls).toBe(0);
    expect(Number(await redis().zscore(tokenRefreshKeys.due, id))).toBe(pausedUntil);
    // Held, not refused: no account.expiring, and the account does not say its refreshes fail.
    expect(await redis().get(tokenRefreshKeys.expiringSent(id))).toBeNull();
    expect(await readTokenRefresh(redis(), (await accounts.findById(id))!)).toBe("automatic");
  });

  it("tells the pacer the usage headers of a refresh's answer", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001103";
    await connectExpiring(accounts, id, "busy-token-secret");
    const answer = () =>
      Response.json(
        { access_token: "fresh-token-secret", token_type: "bearer", expires_in: 5_183_944 },
        { headers: businessUsage(id, 85) },
      );
    expect(
      await refreshAccountToken(
        deps(accounts, async () => answer()),
        id,
      ),
    ).toBe("refreshed");
    expect(await readPace(redis(), id, Date.now())).toEqual({ pausedUntil: null, percent: 85 });
  });
});

describe("account.needs_reconnect of a refused refresh", () => {
  async function subscribe(tenantId: string) {
    await createWebhook(
      redis(),
      tenantId,
      { url: "https://hooks.example.com/dispatch", events: ["account.needs_reconnect"] },
      10,
    );
  }

  /** The tenant's queued deliveries of one event type, by the account they name. */
  async function deliveries(tenantId: string, type: WebhookEventType): Promise<unknown[]> {
    const ids = await redis().zrange(webhookKeys.due(tenantId), 0, -1);
    const records = await Promise.all(ids.map((d) => redis().hgetall(webhookKeys.delivery(d))));
    return records
      .filter((r) => r.event_type === type)
      .map((r) => (JSON.parse(r.body!) as { data: { account_id: string } }).data.account_id);
  }

  it("is sent by the schedule's next look when the worker died between the mark and the event, once", async () => {
    await subscribe("lost-event");
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001201";
    await connectExpiring(accounts, id, "revoked-token-secret", "lost-event");
    // The worker dies as soon as the account is marked: the event is not queued, the account stays claimed.
    const dying = new ConnectedAccounts(redis(), randomBytes(32), []);
    dying.findById = accounts.findById.bind(accounts);
    dying.markNeedsReconnect = async (...args) => {
      await accounts.markNeedsReconnect(...args);
      throw new Error("worker killed");
    };
    await expect(
      refreshAccountToken(
        deps(dying, async () => refused190()),
        id,
      ),
    ).rejects.toThrow("worker killed");
    expect(await accounts.findById(id)).toMatchObject({ status: "needs_reconnect" });
    expect(await deliveries("lost-event", "account.needs_reconnect")).toEqual([]);

    // Its claim ran out: the next look finds it marked, sends what was owed and takes it off the schedule.
    expect(await refreshAccountToken(deps(accounts, fetch), id)).toBe("dropped");
    expect(await deliveries("lost-event", "account.needs_reconnect")).toEqual([id]);
    expect(await redis().zscore(tokenRefreshKeys.due, id)).toBeNull();
    await scheduleTokenRefresh(redis(), id, Date.now());
    expect(await refreshAccountToken(deps(accounts, fetch), id)).toBe("dropped");
    expect(await deliveries("lost-event", "account.needs_reconnect")).toEqual([id]);
  });

  it("is not sent for an account whose token a publication had refused: the schedule drops it, as before", async () => {
    await subscribe("publish-marked");
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001202";
    const account = await connectExpiring(accounts, id, "refused-at-publish-secret", "publish-marked");
    const refused = {
      code: 190,
      subcode: null,
      message: "Error validating access token",
      fbtrace_id: "A3",
      classification: "reconnect-account" as const,
      headline: "Graph refused the account's access token.",
      remedy: "Reconnect the account.",
      advice: "Reconnect the account.",
    };
    expect(await accounts.markNeedsReconnect(id, account.tokenVersion, refused)).toBe(true);
    expect(await refreshAccountToken(deps(accounts, fetch), id)).toBe("dropped");
    expect(await redis().zscore(tokenRefreshKeys.due, id)).toBeNull();
    expect(await deliveries("publish-marked", "account.needs_reconnect")).toEqual([]);
  });
});

describe("what an account's view says of its token's refresh", () => {
  it("automatic until a refresh within 7 days of the expiry fails, then failing; none for a token Dispatch does not refresh", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001301";
    await connectExpiring(accounts, id, "flaky-token-secret");
    expect(await readTokenRefresh(redis(), (await accounts.findById(id))!)).toBe("automatic");
    const unavailable = async () =>
      Response.json({ error: { message: "Service unavailable", code: 2 } }, { status: 503 });
    expect(await refreshAccountToken(deps(accounts, unavailable), id)).toBe("retrying");
    expect(await readTokenRefresh(redis(), (await accounts.findById(id))!)).toBe("failing");
    expect(
      await refreshAccountToken(
        deps(accounts, async () => refused190()),
        id,
      ),
    ).toBe("needs_reconnect");
    expect(await readTokenRefresh(redis(), (await accounts.findById(id))!)).toBe("none");

    const pasted = await accounts.connect({
      tenantId: "acme",
      accountId: "17841400000001302",
      accessToken: "pasted-secret",
    });
    if (pasted === "taken") throw new Error("taken");
    expect(await readTokenRefresh(redis(), pasted)).toBe("none");
  });
});
