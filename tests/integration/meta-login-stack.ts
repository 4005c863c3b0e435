import { rm } from "node:fs/promises";
import path from "node:path";
import { expect, inject } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { createRedis, type Redis } from "@/lib/redis";
import type { AccountView } from "@/lib/accounts/account";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import type { LoginCaller, LoginRefusal } from "@/lib/accounts/meta-login/login-callback";
import { LOGIN_OUTCOME_PATH, readLoginOutcome } from "@/lib/accounts/meta-login/login-outcome-redirect";
import type { SandboxDeps } from "@/lib/graph/sandbox";
import { SESSION_COOKIE } from "@/lib/web/sessions";
import { serveSandbox } from "../sandbox-server";
import { sessionReader } from "./sandbox-dialog";

/**
 * What a test of Meta's logins runs against: the web side's services configured for one tenant
 * (the route handlers are imported after this has set the environment), real Redis, and the
 * Graph sandbox over HTTP standing in for Meta's login hosts, Instagram's and Facebook's, and for
 * the Graph hosts the accounts then publish through.
 */

export interface MetaLoginStack {
  redis: Redis;
  config: Config;
  /** The sandbox's origin; it answers under `/graph`. */
  origin: string;
  publicUrl: string;
  apps: { instagram: { id: string; secret: string }; facebook: { id: string; secret: string } };
  /** How far ahead the sandbox's clock runs: how a code is made to expire. */
  skew: { ms: number };
  newSandboxAccount(username: string): Promise<string>;
  /** A new dashboard session's cookie for the tenant. */
  signedInCookie(): Promise<string>;
  listAccounts(): Promise<AccountView[]>;
  close(): Promise<void>;
}

const ADMIN_TOKEN = "sandbox-admin-token-0123456789";
const PUBLIC_URL = "http://dispatch.test";

/** The login caller of a browser with this cookie, as the routes and the dashboard's pages make it. */
export function callerOf(cookie: string, tenantId: string): LoginCaller {
  return loginCallerOf(new Request(PUBLIC_URL, { headers: { cookie } }), tenantId);
}

/**
 * Where a login's route sent a browser that connected nothing: the outcome page, whose address
 * carries only a random id. Its message, read as that page reads it, by the same session.
 */
export async function outcomePageOf(
  redis: Redis,
  response: Response,
  cookie: string,
  tenantId: string,
): Promise<LoginRefusal> {
  expect(response.status).toBe(303);
  const location = new URL(response.headers.get("location")!, PUBLIC_URL);
  expect(location.pathname).toBe(LOGIN_OUTCOME_PATH);
  expect([...location.searchParams.keys()]).toEqual(["outcome"]);
  expect(location.searchParams.get("outcome")).toMatch(/^[A-Za-z0-9_-]{32}$/);
  return readLoginOutcome(redis, location.searchParams.get("outcome"), callerOf(cookie, tenantId));
}

export async function startMetaLoginStack(tenant: { id: string; key: string }): Promise<MetaLoginStack> {
  const dataDir = path.resolve(__dirname, `../../.test-data/meta-login-${tenant.id}`);
  await rm(dataDir, { recursive: true, force: true });
  const redis = createRedis(inject("redisUrl"));
  const skew = { ms: 0 };
  // The sandbox's deps are made once the config is known; the server reads them per request.
  const deps = {} as SandboxDeps;
  const server = await serveSandbox(deps);
  const graph = `${server.url}/graph`;
  const apps = {
    instagram: { id: "1234567890123", secret: "instagram-login-test-secret" },
    facebook: { id: "2234567890123", secret: "facebook-login-test-secret" },
  };
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `${tenant.id}:${tenant.key}`,
    GRAPH_URL: graph,
    SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    DATA_DIR: dataDir,
    PUBLIC_URL,
    INSTAGRAM_APP_ID: apps.instagram.id,
    INSTAGRAM_APP_SECRET: apps.instagram.secret,
    INSTAGRAM_DIALOG_URL: `${graph}/oauth/authorize`,
    INSTAGRAM_TOKEN_URL: graph,
    // Each login's own Graph host, as the sandbox models Meta's two (lib/graph/sandbox/sandbox-hosts.ts).
    INSTAGRAM_GRAPH_URL: `${graph}/instagram`,
    FACEBOOK_APP_ID: apps.facebook.id,
    FACEBOOK_APP_SECRET: apps.facebook.secret,
    FACEBOOK_DIALOG_URL: `${graph}/v21.0/dialog/oauth`,
    FACEBOOK_GRAPH_URL: `${graph}/facebook`,
  };
  Object.assign(process.env, env);
  const config = parseConfig(env);
  Object.assign(deps, { redis, config, log: () => {}, now: () => Date.now() + skew.ms });
  const { getServices } = await import("@/lib/web/services");
  const accountsRoute = await import("@/app/api/accounts/route");
  Object.assign(deps, sessionReader(getServices().sessions));

  return {
    redis,
    config,
    origin: server.url,
    publicUrl: PUBLIC_URL,
    apps,
    skew,
    async newSandboxAccount(username) {
      const response = await fetch(`${graph}/_sandbox/accounts`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ username }),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { account_id: string }).account_id;
    },
    async signedInCookie() {
      const session = await getServices().sessions.create(tenant.id);
      return `${SESSION_COOKIE}=${session.value}`;
    },
    async listAccounts() {
      const response = await accountsRoute.GET(
        new Request(`${PUBLIC_URL}/api/accounts`, { headers: { authorization: `Bearer ${tenant.key}` } }),
        undefined,
      );
      expect(response.status).toBe(200);
      return ((await response.json()) as { data: AccountView[] }).data;
    },
    async close() {
      getServices().redis.disconnect();
      await server.close();
      redis.disconnect();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
