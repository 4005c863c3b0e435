import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { finishInstagramLogin } from "@/lib/accounts/meta-login/connect-with-instagram";
import { instagramLoginDeps } from "@/lib/accounts/meta-login/instagram-login-deps";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { createRedis, type Redis } from "@/lib/redis";
import type { AccountView } from "@/lib/accounts/account";
import { connectedAccountKeys } from "@/lib/accounts/connected-accounts";
import type { SandboxDeps } from "@/lib/graph/sandbox";
import { SESSION_COOKIE } from "@/lib/web/sessions";
import { serveSandbox, type SandboxServer } from "../sandbox-server";
import { outcomePageOf } from "./meta-login-stack";
import { sessionReader, submitDialog } from "./sandbox-dialog";

/**
 * Instagram Login end to end on the real stack: the route handlers, real Redis, and the Graph
 * sandbox over HTTP standing in for www.instagram.com, api.instagram.com and graph.instagram.com;
 * its dialog is driven as a browser would (GET the page, POST its form, follow the redirect).
 */

const DATA_DIR = path.resolve(__dirname, "../../.test-data/instagram-login");
const TENANT_KEY = "instagram-login-key-0123456789abcdef";
const ADMIN_TOKEN = "sandbox-admin-token-0123456789";
const APP = { id: "1234567890123", secret: "instagram-login-test-secret" };
const PUBLIC_URL = "http://dispatch.test";
const DAY_MS = 86_400_000;

let redis: Redis;
let graphServer: SandboxServer;
let config: Config;
/** The sandbox's clock runs this far ahead: how a code is made to expire. */
let sandboxSkewMs = 0;
let routes: {
  start: typeof import("@/app/api/accounts/connect/instagram/route");
  callback: typeof import("@/app/api/accounts/connect/instagram/callback/route");
  accounts: typeof import("@/app/api/accounts/route");
};

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  // The sandbox's deps are made once the config is known; the server reads them per request.
  const deps = {} as SandboxDeps;
  graphServer = await serveSandbox(deps);
  const graph = `${origin()}/graph`;
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `iglogin:${TENANT_KEY}`,
    GRAPH_URL: graph,
    SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    DATA_DIR,
    PUBLIC_URL,
    INSTAGRAM_APP_ID: APP.id,
    INSTAGRAM_APP_SECRET: APP.secret,
    INSTAGRAM_DIALOG_URL: `${graph}/oauth/authorize`,
    INSTAGRAM_TOKEN_URL: graph,
    INSTAGRAM_GRAPH_URL: graph,
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  Object.assign(deps, { redis, config, log: () => {}, now: () => Date.now() + sandboxSkewMs });
  routes = {
    start: await import("@/app/api/accounts/connect/instagram/route"),
    callback: await import("@/app/api/accounts/connect/instagram/callback/route"),
    accounts: await import("@/app/api/accounts/route"),
  };
  const { getServices } = await import("@/lib/web/services");
  Object.assign(deps, sessionReader(getServices().sessions));
});

afterAll(async () => {
  const { getServices } = await import("@/lib/web/services");
  getServices().redis.disconnect();
  await graphServer?.close();
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
});

const origin = () => graphServer.url;

async function newSandboxAccount(username: string): Promise<string> {
  const response = await fetch(`${origin()}/graph/_sandbox/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ username }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { account_id: string }).account_id;
}

async function signedInCookie(): Promise<string> {
  const { getServices } = await import("@/lib/web/services");
  const session = await getServices().sessions.create("iglogin");
  return `${SESSION_COOKIE}=${session.value}`;
}

/** GET /api/accounts/connect/instagram as the signed-in browser: the dialog's address. */
async function startLogin(cookie: string): Promise<URL> {
  const response = await routes.start.GET(
    new Request(`${PUBLIC_URL}/api/accounts/connect/instagram`, { headers: { cookie } }),
    undefined,
  );
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

/** The dialog's form, submitted by the signed-in browser with the boxes it ticked: where Instagram sends the browser back. */
async function decide(
  dialog: URL,
  cookie: string,
  decision: "allow" | "cancel",
  accountId?: string,
  untick: string[] = [],
): Promise<URL> {
  const response = await submitDialog(dialog, cookie, (form, page) => {
    if (accountId) expect(page).toContain(`value="${accountId}"`);
    form.set("decision", decision);
    if (accountId) form.set("account_id", accountId);
    for (const scope of untick) form.delete("permission", scope);
  });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

async function callback(back: URL, cookie: string): Promise<Response> {
  return routes.callback.GET(
    new Request(`${PUBLIC_URL}${back.pathname}${back.search}`, { headers: { cookie } }),
    undefined,
  );
}

const outcomeOf = (response: Response, cookie: string) => outcomePageOf(redis, response, cookie, "iglogin");

async function listAccounts(): Promise<AccountView[]> {
  const response = await routes.accounts.GET(
    new Request(`${PUBLIC_URL}/api/accounts`, { headers: { authorization: `Bearer ${TENANT_KEY}` } }),
    undefined,
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: AccountView[] }).data;
}

const exchange = (fields: Record<string, string>) =>
  fetch(`${origin()}/graph/oauth/access_token`, {
    method: "POST",
    body: new URLSearchParams({
      client_id: APP.id,
      client_secret: APP.secret,
      grant_type: "authorization_code",
      redirect_uri: config.INSTAGRAM_LOGIN.redirectUri,
      ...fields,
    }),
  });

describe("Instagram Login", () => {
  it("sends the browser to the dialog with the app, the exact redirect_uri, the scopes and a state", async () => {
    const dialog = await startLogin(await signedInCookie());
    expect(`${dialog.origin}${dialog.pathname}`).toBe(`${origin()}/graph/oauth/authorize`);
    expect(Object.fromEntries(dialog.searchParams)).toEqual({
      client_id: APP.id,
      redirect_uri: `${PUBLIC_URL}/api/accounts/connect/instagram/callback`,
      response_type: "code",
      scope: "instagram_business_basic,instagram_business_content_publish,instagram_business_manage_insights",
      state: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
  });

  it("Allow: connects the account with its username, a sealed long-lived token and its expiry", async () => {
    const accountId = await newSandboxAccount(`iglogin_${Date.now()}`);
    const cookie = await signedInCookie();
    const back = await decide(await startLogin(cookie), cookie, "allow", accountId);
    expect(back.searchParams.get("code")).toBeTruthy();
    const before = Date.now();
    const response = await callback(back, cookie);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/dashboard/accounts?connected=${accountId}#account-${accountId}`);

    const account = (await listAccounts()).find((a) => a.account_id === accountId);
    expect(account).toMatchObject({
      status: "connected",
      login: "instagram",
      username: expect.stringMatching(/^iglogin_/),
    });
    const expiresIn = Date.parse(account!.token_expires_at!) - before;
    expect(expiresIn).toBeGreaterThan(59 * DAY_MS);
    expect(expiresIn).toBeLessThan(61 * DAY_MS);
    const record = await redis.hgetall(connectedAccountKeys.record(accountId));
    expect(record.token).toMatch(/^v1\./);
    expect(record.graph_url).toBe(config.INSTAGRAM_LOGIN.graphUrl);
  });

  it("the same callback twice: the replayed state connects nothing", async () => {
    const accountId = await newSandboxAccount(`iglogin_replay_${Date.now()}`);
    const cookie = await signedInCookie();
    const back = await decide(await startLogin(cookie), cookie, "allow", accountId);
    const first = await callback(back, cookie);
    expect(first.status).toBe(303);
    await redis.del(connectedAccountKeys.record(accountId));
    const again = await callback(back, cookie);
    expect((await outcomeOf(again, cookie)).detail).toContain("already used");
    expect((await listAccounts()).some((a) => a.account_id === accountId)).toBe(false);
  });

  it("a state from another session, an unknown one and an expired one: clear pages, nothing stored", async () => {
    const accountId = await newSandboxAccount(`iglogin_state_${Date.now()}`);
    const ownCookie = await signedInCookie();
    const back = await decide(await startLogin(ownCookie), ownCookie, "allow", accountId);
    const strangerCookie = await signedInCookie();
    const stranger = await callback(back, strangerCookie);
    expect((await outcomeOf(stranger, strangerCookie)).detail).toContain("started in another session");

    const forged = new URL(back);
    forged.searchParams.set("state", "A".repeat(32));
    const forgerCookie = await signedInCookie();
    expect((await outcomeOf(await callback(forged, forgerCookie), forgerCookie)).detail).toContain("not started here");

    const cookie = await signedInCookie();
    const late = await decide(await startLogin(cookie), cookie, "allow", accountId);
    const { getServices } = await import("@/lib/web/services");
    const request = new Request(`${PUBLIC_URL}${late.pathname}`, { headers: { cookie } });
    const lateDeps = {
      ...instagramLoginDeps(getServices()),
      now: () => Date.now() + (config.META_LOGIN_STATE_TTL_S + 1) * 1000,
    };
    const outcome = await finishInstagramLogin(
      lateDeps,
      loginCallerOf(request, "iglogin"),
      Object.fromEntries(late.searchParams),
    );
    expect(outcome).toMatchObject({ kind: "refused", detail: expect.stringContaining("took too long") });
    expect((await listAccounts()).some((a) => a.account_id === accountId)).toBe(false);
  });

  it("Cancel at the dialog: 'You cancelled at Instagram', nothing stored", async () => {
    const cookie = await signedInCookie();
    const back = await decide(await startLogin(cookie), cookie, "cancel");
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: "access_denied",
      error_reason: "user_denied",
    });
    const count = (await listAccounts()).length;
    const response = await callback(back, cookie);
    expect(await outcomeOf(response, cookie)).toMatchObject({ title: "You cancelled at Instagram" });
    expect(await listAccounts()).toHaveLength(count);
  });
});

describe("the sandbox's Instagram token endpoints answer as Meta's", () => {
  async function freshCode(): Promise<string> {
    const accountId = await newSandboxAccount(`iglogin_code_${Date.now()}`);
    const cookie = await signedInCookie();
    const back = await decide(await startLogin(cookie), cookie, "allow", accountId);
    return back.searchParams.get("code")!;
  }

  it("a code works once: the second exchange is Meta's 'has been used'", async () => {
    const code = await freshCode();
    const first = await exchange({ code });
    expect(first.status).toBe(200);
    // Meta's Business Login page: wrapped in data, user_id a string, permissions those allowed, comma-separated.
    expect(await first.json()).toEqual({
      data: [
        {
          access_token: expect.stringMatching(/^IGSANDBOX/),
          user_id: expect.stringMatching(/^\d+$/),
          permissions: "instagram_business_basic,instagram_business_content_publish,instagram_business_manage_insights",
        },
      ],
    });
    const again = await exchange({ code });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({
      error_type: "OAuthException",
      code: 400,
      error_message: "This authorization code has been used",
    });
  });

  it("a wrong secret, a wrong redirect_uri and an expired code are refused", async () => {
    const wrongSecret = await exchange({ code: await freshCode(), client_secret: "not-the-secret" });
    expect(wrongSecret.status).toBe(400);
    expect(((await wrongSecret.json()) as { error_message: string }).error_message).toBe(
      "Error validating client secret.",
    );

    const wrongRedirect = await exchange({ code: await freshCode(), redirect_uri: `${PUBLIC_URL}/elsewhere` });
    expect(((await wrongRedirect.json()) as { error_message: string }).error_message).toMatch(
      /redirect_uri is identical/,
    );

    const code = await freshCode();
    sandboxSkewMs = 61 * 60 * 1000;
    try {
      const expired = await exchange({ code });
      expect(((await expired.json()) as { error_message: string }).error_message).toBe(
        "This authorization code has expired",
      );
    } finally {
      sandboxSkewMs = 0;
    }
  });

  it("the long-lived exchange refuses a wrong secret with a Graph error object, and answers {access_token, token_type, expires_in}", async () => {
    const shortLived = (await (await exchange({ code: await freshCode() })).json()) as {
      data: { access_token: string }[];
    };
    const access_token = shortLived.data[0]!.access_token;
    const url = (secret: string) =>
      `${origin()}/graph/access_token?${new URLSearchParams({ grant_type: "ig_exchange_token", client_secret: secret, access_token })}`;
    const refused = await fetch(url("not-the-secret"));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { type: string; message: string } }).error).toMatchObject({
      type: "OAuthException",
      message: "Error validating client secret.",
    });
    const answer = await fetch(url(APP.secret));
    expect(await answer.json()).toEqual({
      access_token: expect.any(String),
      token_type: "bearer",
      expires_in: 5_183_944,
    });
  });

  it("the dialog refuses a redirect_uri the app did not register", async () => {
    const dialog = await startLogin(await signedInCookie());
    dialog.searchParams.set("redirect_uri", "https://elsewhere.example/callback");
    const page = await fetch(dialog);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("Invalid redirect_uri");
  });
});
