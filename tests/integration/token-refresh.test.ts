import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { ConnectedAccounts, connectedAccountKeys, type ConnectedAccount } from "@/lib/accounts/connected-accounts";
import { loadAccountsKey } from "@/lib/accounts/token-cipher";
import {
  finishInstagramLogin,
  startInstagramLogin,
  type InstagramLoginDeps,
} from "@/lib/accounts/meta-login/connect-with-instagram";
import {
  claimDueTokenRefreshes,
  enrollInstagramAccounts,
  tokenRefreshKeys,
} from "@/lib/accounts/token-refresh/token-refresh-queue";
import { tokenRefreshOptions } from "@/lib/accounts/token-refresh/start-token-refresh";
import {
  startTokenRefreshSchedule,
  type TokenRefreshSchedule,
} from "@/lib/accounts/token-refresh/token-refresh-schedule";
import type { Log } from "@/lib/log";
import { createRedis, type Redis } from "@/lib/redis";
import { createGraphPacer } from "@/lib/graph/pacing";
import type { SandboxDeps } from "@/lib/graph/sandbox";
import { createWebhook } from "@/lib/webhooks/store";
import { createWorkerServices } from "@/lib/worker/services";
import { webhookKeys } from "@/lib/webhooks/keys";
import type { WebhookEventType } from "@/lib/webhooks/events";
import { SESSION_COOKIE, SessionStore } from "@/lib/web/sessions";
import { serveSandbox, type SandboxServer } from "../sandbox-server";
import { sessionReader, submitDialog } from "./sandbox-dialog";
import { spawnWorker, stopWorker, waitFor } from "../helpers";

/**
 * The token refresh on the real stack: real Redis, the Graph sandbox over HTTP standing in for
 * Instagram (its login and refresh_access_token), accounts connected through Instagram Login, and
 * the schedule running as a worker runs it, on a short clock. Nobody acts after the connection.
 */

const DATA_DIR = path.resolve(__dirname, "../../.test-data/token-refresh");
const ADMIN_TOKEN = "sandbox-admin-token-0123456789";
const DAY_MS = 86_400_000;

let redis: Redis;
let graphServer: SandboxServer;
let env: Record<string, string>;
let config: Config;
let accounts: ConnectedAccounts;
let loginDeps: InstagramLoginDeps;
let sessions: SessionStore;
/** Every refresh_access_token call the sandbox received, by the token it was asked to refresh. */
const refreshCalls = new Map<string, number>();
const schedules: TokenRefreshSchedule[] = [];

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  // A database of its own: the schedule and its lease are cluster-wide keys, and other files' workers share the server.
  redis = createRedis(`${inject("redisUrl")}/5`);
  const deps = {} as SandboxDeps;
  graphServer = await serveSandbox(deps, ({ url }) => {
    if (!url.pathname.endsWith("/refresh_access_token")) return;
    const token = url.searchParams.get("access_token") ?? "";
    refreshCalls.set(token, (refreshCalls.get(token) ?? 0) + 1);
  });
  const graph = `${graphServer.url}/graph`;
  env = {
    REDIS_URL: `${inject("redisUrl")}/5`,
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: "refresh:refresh-key-0123456789abcdef",
    GRAPH_URL: graph,
    SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    DATA_DIR,
    PUBLIC_URL: "http://dispatch.test",
    INSTAGRAM_APP_ID: "1234567890123",
    INSTAGRAM_APP_SECRET: "token-refresh-test-secret",
    // The schedule's clock, short: looked at (and a failed refresh tried again) every 100 ms.
    TOKEN_REFRESH_INTERVAL_MS: "100",
    INSTAGRAM_DIALOG_URL: `${graph}/oauth/authorize`,
    INSTAGRAM_TOKEN_URL: graph,
    INSTAGRAM_GRAPH_URL: graph,
  };
  config = parseConfig(env);
  // The dialog serves a signed-in tenant: sessions as the web app keeps them.
  sessions = new SessionStore(redis, randomBytes(32));
  Object.assign(deps, { redis, config, log: () => {}, now: () => Date.now(), ...sessionReader(sessions) });
  accounts = new ConnectedAccounts(redis, loadAccountsKey(config), []);
  loginDeps = {
    redis,
    accounts,
    login: config.INSTAGRAM_LOGIN,
    stateTtlS: config.META_LOGIN_STATE_TTL_S,
    version: config.GRAPH_VERSION,
    fetch: (input, init) => fetch(input, init),
    pacer: createGraphPacer(redis),
    log: () => {},
  };
});

afterEach(async () => {
  await Promise.all(schedules.splice(0).map((schedule) => schedule.stop()));
});

afterAll(async () => {
  await graphServer?.close();
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
});

/** A schedule as the worker starts it (start-token-refresh.ts), on the configuration's short clock. */
function startSchedule(owner: string, log: Log = () => {}): TokenRefreshSchedule {
  const { pacer } = createWorkerServices(config, redis);
  const schedule = startTokenRefreshSchedule(tokenRefreshOptions(config, { redis, accounts, pacer, log }, owner));
  schedules.push(schedule);
  return schedule;
}

async function control(pathname: string, body: unknown): Promise<Response> {
  const response = await fetch(`${graphServer.url}/graph/_sandbox/${pathname}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return response;
}

let made = 0;
/**
 * An account whose long-lived tokens expire `expiresInS` after issue (old enough to refresh),
 * connected through Instagram Login: the dialog's Allow, then the callback, as a browser would.
 */
async function connectNearlyExpired(tenantId: string, expiresInS: number): Promise<ConnectedAccount> {
  const username = `refresh_${Date.now().toString(36)}_${++made}`;
  const created = await control("accounts", { username, token_expires_in: expiresInS });
  const accountId = ((await created.json()) as { account_id: string }).account_id;
  const caller = { tenantId, binding: "token-refresh-test" };
  const dialog = new URL(await startInstagramLogin(loginDeps, caller));
  const session = await sessions.create(tenantId);
  const allowed = await submitDialog(dialog, `${SESSION_COOKIE}=${session.value}`, (form) => {
    form.set("decision", "allow");
    form.set("account_id", accountId);
  });
  const back = new URL(allowed.headers.get("location")!);
  const outcome = await finishInstagramLogin(loginDeps, caller, Object.fromEntries(back.searchParams));
  expect(outcome).toMatchObject({ kind: "connected", accountId });
  const account = (await accounts.findById(accountId))!;
  expect(Date.parse(account.tokenExpiresAt!) - Date.now()).toBeLessThanOrEqual(expiresInS * 1000);
  return account;
}

async function subscribe(tenantId: string, events: WebhookEventType[]): Promise<void> {
  await createWebhook(redis, tenantId, { url: "https://hooks.example.com/dispatch", events }, 10);
}

/** The tenant's queued deliveries' bodies, of one event type. */
async function deliveries(tenantId: string, type: WebhookEventType): Promise<{ data: Record<string, unknown> }[]> {
  const ids = await redis.zrange(webhookKeys.due(tenantId), 0, -1);
  const records = await Promise.all(ids.map((id) => redis.hgetall(webhookKeys.delivery(id))));
  return records
    .filter((r) => r.event_type === type)
    .map((r) => JSON.parse(r.body!) as { data: Record<string, unknown> });
}

const expiresInMs = (account: ConnectedAccount | undefined) => Date.parse(account?.tokenExpiresAt ?? "") - Date.now();
const refreshed = (account: ConnectedAccount | undefined) => expiresInMs(account) > 59 * DAY_MS;

/** The account once its token was refreshed: 60 days to go again. */
function waitForRefresh(accountId: string, what = "the token to be refreshed"): Promise<ConnectedAccount> {
  return waitFor(
    async () => {
      const account = await accounts.findById(accountId);
      return refreshed(account) ? account : undefined;
    },
    { timeoutMs: 30_000, what },
  );
}

describe("the token refresh schedule", () => {
  it("refreshes a token near its end with nobody acting: a later expiry, the new token stored sealed, the old one gone", async () => {
    const before = await connectNearlyExpired("refresh-a", 3600);
    startSchedule("worker-a");
    const after = await waitForRefresh(before.accountId);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after).toMatchObject({ status: "connected", login: "instagram" });
    expect(refreshCalls.get(before.accessToken!)).toBe(1);
    expect(JSON.stringify(await redis.hgetall(connectedAccountKeys.record(before.accountId)))).not.toContain(
      after.accessToken!,
    );
    // The new token works at Instagram's Graph host, and is next due within TOKEN_REFRESH_BEFORE_S of its expiry.
    const me = await fetch(
      `${config.INSTAGRAM_LOGIN.graphUrl}/${config.GRAPH_VERSION}/me?fields=user_id&access_token=${after.accessToken}`,
    );
    expect(await me.json()).toMatchObject({ user_id: before.accountId });
    const due = Number(await redis.zscore(tokenRefreshKeys.due, before.accountId));
    expect(due).toBe(Date.parse(after.tokenExpiresAt!) - config.TOKEN_REFRESH_BEFORE_S * 1000);
  });

  it("a refresh Instagram refuses with 190 marks the account needs_reconnect and queues account.needs_reconnect once", async () => {
    await subscribe("refresh-b", ["account.needs_reconnect"]);
    const refused = await connectNearlyExpired("refresh-b", 3600);
    await control(`accounts/${refused.accountId}/faults`, { on: "refresh", code: 190, count: 1 });
    // An expired token cannot be refreshed either: the sandbox answers Meta's 190/463.
    const expired = await connectNearlyExpired("refresh-b", 3600);
    await control(`accounts/${expired.accountId}/token`, { state: "expired" });
    startSchedule("worker-b");

    for (const [account, subcode] of [
      [refused, null],
      [expired, 463],
    ] as const) {
      // Marked, then its event queued, then off the schedule (a reconnect puts it back).
      await waitFor(async () => (await redis.zscore(tokenRefreshKeys.due, account.accountId)) === null, {
        timeoutMs: 30_000,
        what: "the account to leave the schedule",
      });
      const marked = await accounts.findById(account.accountId);
      expect(marked).toMatchObject({ status: "needs_reconnect", accessToken: account.accessToken });
      expect(marked!.error).toMatchObject({ code: 190, subcode, classification: "reconnect-account" });
    }
    const events = await deliveries("refresh-b", "account.needs_reconnect");
    expect(events.map((e) => e.data.account_id).sort()).toEqual([refused.accountId, expired.accountId].sort());
    expect(events.every((e) => e.data.status === "needs_reconnect")).toBe(true);
    expect(refreshCalls.get(refused.accessToken!)).toBe(1);
    expect(refreshCalls.get(expired.accessToken!)).toBe(1);
  });

  it("two schedulers sharing Redis refresh each token once: one works the schedule, the other takes over when it stops", async () => {
    const worked: Record<string, string[]> = { "worker-c1": [], "worker-c2": [] };
    const first = startSchedule("worker-c1", (_, message, fields) => {
      if (message === "account token refreshed") worked["worker-c1"]!.push(String(fields?.account_id));
    });
    await waitFor(async () => (await redis.get(tokenRefreshKeys.lease)) === "worker-c1", {
      what: "the first scheduler to hold the lease",
    });
    startSchedule("worker-c2", (_, message, fields) => {
      if (message === "account token refreshed") worked["worker-c2"]!.push(String(fields?.account_id));
    });
    // Both are running when the accounts come due, one after another.
    const due: ConnectedAccount[] = [];
    for (let i = 0; i < 4; i++) due.push(await connectNearlyExpired("refresh-c", 3600));
    await waitFor(async () => (await Promise.all(due.map((a) => accounts.findById(a.accountId)))).every(refreshed), {
      timeoutMs: 30_000,
      what: "every token to be refreshed",
    });
    expect(worked["worker-c1"]!.sort()).toEqual(due.map((a) => a.accountId).sort());
    expect(worked["worker-c2"]).toEqual([]);

    // Due again at once, and the first scheduler gone: the second looks at them and finds nothing to refresh.
    await first.stop();
    for (const account of due) await redis.zadd(tokenRefreshKeys.due, Date.now(), account.accountId);
    await waitFor(
      async () => {
        const scores = await Promise.all(due.map((a) => redis.zscore(tokenRefreshKeys.due, a.accountId)));
        return scores.every((score) => Number(score) > Date.now() + 40 * DAY_MS);
      },
      { timeoutMs: 30_000, what: "the second scheduler to look at them again" },
    );
    const after = await Promise.all(due.map((a) => accounts.findById(a.accountId)));
    for (const [i, account] of due.entries()) {
      expect(refreshCalls.get(account.accessToken!)).toBe(1);
      expect(refreshCalls.get(after[i]!.accessToken!) ?? 0).toBe(0);
    }
    expect(worked["worker-c2"]).toEqual([]);
  });

  it("two claims at once never take the same account: the guard for two schedulers holding the lease (one lost it mid-way)", async () => {
    const ids = ["17841400000008801", "17841400000008802", "17841400000008803", "17841400000008804"];
    for (const id of ids) await redis.zadd(tokenRefreshKeys.due, 1, id);
    const claims = await Promise.all([1, 2, 3].map(() => claimDueTokenRefreshes(redis, 5, 2, 60_000)));
    const taken = claims.flat().filter((id) => ids.includes(id));
    expect(taken.sort()).toEqual(ids);
    expect(new Set(taken).size).toBe(taken.length);
    for (const id of ids) expect(await redis.zscore(tokenRefreshKeys.due, id)).toBe("60005");
    await redis.zrem(tokenRefreshKeys.due, ...ids);
  });

  it("a token within 7 days of its end whose refresh keeps failing sends account.expiring once, and is refreshed when Instagram answers again", async () => {
    await subscribe("refresh-d", ["account.expiring", "account.needs_reconnect"]);
    const account = await connectNearlyExpired("refresh-d", 3 * 86_400);
    await control(`accounts/${account.accountId}/faults`, { on: "refresh", code: 2, count: 4 });
    startSchedule("worker-d");
    const after = await waitForRefresh(account.accountId, "the token to be refreshed after the failures");
    expect(refreshCalls.get(account.accessToken!)).toBe(5);
    expect(after.status).toBe("connected");
    const expiring = await deliveries("refresh-d", "account.expiring");
    expect(expiring).toHaveLength(1);
    expect(expiring[0]!.data).toMatchObject({
      account_id: account.accountId,
      status: "connected",
      token_expires_at: account.tokenExpiresAt,
    });
    expect(await deliveries("refresh-d", "account.needs_reconnect")).toHaveLength(0);
  });

  it("a worker process refreshes a token near its end by itself", async () => {
    const account = await connectNearlyExpired("refresh-f", 3600);
    const worker = spawnWorker(env, "token-refresh-worker");
    try {
      await waitFor(() => worker.output().includes("worker ready"), { timeoutMs: 90_000, what: "the worker to start" });
      const after = await waitForRefresh(account.accountId);
      expect(after.accessToken).not.toBe(account.accessToken);
      expect(refreshCalls.get(account.accessToken!)).toBe(1);
    } finally {
      await stopWorker(worker);
    }
    // Stopped, it gave the lease up for another worker.
    expect(await redis.get(tokenRefreshKeys.lease)).toBeNull();
  });

  it("a worker's start puts Instagram-login accounts connected before the schedule existed on it, and nothing else", async () => {
    const login = await accounts.connect({
      tenantId: "refresh-e",
      accountId: "17841400000009901",
      accessToken: "IG-before-the-schedule",
      tokenExpiresAt: new Date(Date.now() + 30 * DAY_MS).toISOString(),
      graphUrl: config.INSTAGRAM_LOGIN.graphUrl,
      login: "instagram",
    });
    const pasted = await accounts.connect({ tenantId: "refresh-e", accountId: "17841400000009902", accessToken: "x" });
    expect(login).not.toBe("taken");
    expect(pasted).not.toBe("taken");
    expect(await enrollInstagramAccounts(redis, accounts, ["refresh-e", "refresh-e"], 1000)).toBe(1);
    expect(await redis.zscore(tokenRefreshKeys.due, "17841400000009901")).toBe("1000");
    expect(await redis.zscore(tokenRefreshKeys.due, "17841400000009902")).toBeNull();
    // Already on it: its time is kept.
    expect(await enrollInstagramAccounts(redis, accounts, ["refresh-e"], 2000)).toBe(0);
    expect(await redis.zscore(tokenRefreshKeys.due, "17841400000009901")).toBe("1000");
  });
});
