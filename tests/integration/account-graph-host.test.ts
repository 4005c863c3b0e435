import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse, Server } from "node:http";
import path from "node:path";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import type { AccountView } from "@/lib/accounts/account";
import { connectedAccountKeys } from "@/lib/accounts/connected-accounts";
import { createKafka, createProducer } from "@/lib/kafka";
import { createRedis, type Redis } from "@/lib/redis";
import type { PublicationView } from "@/lib/reels/publication";
import { startPublicationConsumer } from "@/lib/reels/publication-consumer";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { inProcessWorker, waitFor } from "../helpers";
import { closeServers, listen, origin, serveSandbox, type SandboxServer } from "../sandbox-server";

/**
 * An account connected with Meta's login is called at the Graph host it was connected through,
 * not at GRAPH_URL: here GRAPH_URL is a port that refuses every connection, and the Instagram
 * Login's Graph host (INSTAGRAM_GRAPH_URL) and Facebook Login's (FACEBOOK_GRAPH_URL) are the
 * sandbox over HTTP on two ports, so a reel that publishes, and an account whose username is read,
 * went to the account's host. A stored host the configuration
 * does not name gets no call, and the account must be connected again.
 */

const SAMPLES = path.resolve(__dirname, "../../public/samples");
const DATA_DIR = path.resolve(__dirname, "../../.test-data/account-graph-host");
const TENANT_KEY = "graph-host-key-0123456789abcdef";
const ADMIN_TOKEN = "sandbox-admin-token-0123456789";

let redis: Redis;
let sandboxServer: SandboxServer;
/** The same sandbox on another port: Facebook Login's Graph host. */
let facebookServer: SandboxServer;
let files: Server;
const filesSeen: string[] = [];
let config: Config;
let sandbox: SandboxDeps;
let producer: Producer;
let consumer: RunningConsumer | undefined;
let routes: {
  reels: typeof import("@/app/api/reels/route");
  reel: typeof import("@/app/api/reels/[id]/route");
  accounts: typeof import("@/app/api/accounts/route");
};

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  sandbox = {} as SandboxDeps;
  sandboxServer = await serveSandbox(sandbox);
  facebookServer = await serveSandbox(sandbox);
  files = await listen(serveFiles);
  const refused = await listen((_req, res) => res.end());
  const refusedUrl = `${origin(refused)}/graph`;
  await new Promise((resolve) => refused.close(resolve));
  const graph = `${sandboxServer.url}/graph`;
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `graphhost:${TENANT_KEY}`,
    GRAPH_URL: refusedUrl,
    INSTAGRAM_APP_ID: "1234567890123",
    INSTAGRAM_APP_SECRET: "graph-host-test-secret",
    INSTAGRAM_DIALOG_URL: `${graph}/oauth/authorize`,
    INSTAGRAM_TOKEN_URL: graph,
    INSTAGRAM_GRAPH_URL: graph,
    FACEBOOK_APP_ID: "2234567890123",
    FACEBOOK_APP_SECRET: "graph-host-facebook-secret",
    FACEBOOK_GRAPH_URL: `${facebookServer.url}/graph`,
    REEL_POLL_INTERVAL_MS: "50",
    REEL_POLL_ATTEMPTS: "100",
    REEL_PREFLIGHT: "off",
    ALLOW_PRIVATE_URLS: "true",
    DATA_DIR,
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  // The sandbox is another Graph: its own configuration names itself.
  const sandboxConfig = parseConfig({
    ...env,
    GRAPH_URL: graph,
    SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    SANDBOX_PROCESSING_MS: "200",
  });
  Object.assign(sandbox, { redis, config: sandboxConfig, log: () => {}, now: () => Date.now() });
  expect(config.INSTAGRAM_LOGIN.graphUrl).toBe(graph);
  expect(config.GRAPH_URL).not.toBe(graph);
  producer = createProducer(createKafka(config.KAFKA_BROKERS, "account-graph-host-test"));
  await producer.connect();
  routes = {
    reels: await import("@/app/api/reels/route"),
    reel: await import("@/app/api/reels/[id]/route"),
    accounts: await import("@/app/api/accounts/route"),
  };
  const workerId = `graph-host-${randomUUID().slice(0, 8)}`;
  consumer = await startPublicationConsumer(inProcessWorker({ config, redis, producer, log: () => {} }, workerId));
});

afterAll(async () => {
  await consumer?.stop(0).catch(() => {});
  await settleSandboxProcessing(sandbox);
  await producer?.disconnect().catch(() => {});
  const { getServices } = await import("@/lib/web/services");
  const services = getServices();
  await (await services.producer()).disconnect().catch(() => {});
  services.redis.disconnect();
  await sandboxServer?.close();
  await facebookServer?.close();
  await closeServers(files);
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
});

/** The sample videos; every request is noted, so a Graph call that reached this server shows. */
function serveFiles(req: IncomingMessage, res: ServerResponse) {
  filesSeen.push(`${req.method} ${req.url}`);
  res.writeHead(200, { "content-type": "video/mp4" });
  createReadStream(path.join(SAMPLES, path.basename(req.url ?? "")))
    .on("error", () => res.destroy())
    .pipe(res);
}

/** A sandbox account, connected as Meta's login connects one: with the Graph host it came through. */
async function connectedThroughLogin(
  login: "instagram" | "facebook" = "instagram",
): Promise<{ accountId: string; accessToken: string }> {
  const response = await fetch(`${sandboxServer.url}/graph/_sandbox/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ username: `host_${randomUUID().slice(0, 8)}` }),
  });
  expect(response.status).toBe(201);
  const { account_id: accountId, access_token: accessToken } = (await response.json()) as {
    account_id: string;
    access_token: string;
  };
  const { getServices } = await import("@/lib/web/services");
  const connected = await getServices().accounts.connect({
    tenantId: "graphhost",
    accountId,
    accessToken,
    graphUrl: login === "facebook" ? config.FACEBOOK_LOGIN.graphUrl : config.INSTAGRAM_LOGIN.graphUrl,
    login,
    // A Facebook Page token does not expire.
    tokenExpiresAt: login === "facebook" ? null : new Date(Date.now() + 60 * 86_400_000).toISOString(),
  });
  expect(connected).not.toBe("taken");
  return { accountId, accessToken };
}

const auth = { authorization: `Bearer ${TENANT_KEY}` };

async function createReel(accountId: string, caption: string): Promise<string> {
  const response = await routes.reels.POST(
    new Request("http://dispatch.test/api/reels", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ account_id: accountId, video_url: `${origin(files)}/reel-valid.mp4`, caption }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return ((await response.json()) as { publication_id: string }).publication_id;
}

async function readReel(id: string): Promise<PublicationView> {
  const response = await routes.reel.GET(new Request(`http://dispatch.test/api/reels/${id}`, { headers: auth }), {
    params: Promise.resolve({ id }),
  });
  return (await response.json()) as PublicationView;
}

async function accountViews(): Promise<AccountView[]> {
  const response = await routes.accounts.GET(new Request("http://dispatch.test/api/accounts", { headers: auth }), {
    params: Promise.resolve({}),
  });
  return ((await response.json()) as { data: AccountView[] }).data;
}

describe("an account's own Graph host", () => {
  for (const login of ["instagram", "facebook"] as const)
    it(`publishes a reel through the host the account was connected through (${login} login), while GRAPH_URL refuses`, async () => {
      const { accountId, accessToken } = await connectedThroughLogin(login);
      const caption = `through its host ${randomUUID()}`;
      const id = await createReel(accountId, caption);
      const done = await waitFor(
        async () => {
          const view = await readReel(id);
          return ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(view.status) ? view : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: `publication ${id} to settle` },
      );
      expect(done.status, JSON.stringify(done.error)).toBe("PUBLISHED");
      expect(done.post_id).toBeTruthy();

      const media = await fetch(
        `${sandboxServer.url}/graph/v21.0/${accountId}/media?fields=id,caption&access_token=${accessToken}`,
      );
      const { data } = (await media.json()) as { data: { id: string; caption: string }[] };
      expect(data.map((m) => m.caption)).toContain(caption);

      // The web side reads the account at its host too: its username comes from the sandbox.
      const view = (await accountViews()).find((a) => a.account_id === accountId);
      expect(view).toMatchObject({ status: "connected", login });
      expect(view?.username).toMatch(/^host_/);
    });

  it("sends nothing to a stored host the configuration does not name: the account needs reconnecting", async () => {
    const { accountId } = await connectedThroughLogin();
    const elsewhere = `${origin(files)}/graph`;
    await redis.hset(connectedAccountKeys.record(accountId), "graph_url", elsewhere);

    const id = await createReel(accountId, `not sent ${randomUUID()}`);
    const waiting = await waitFor(
      async () => {
        const view = await readReel(id);
        return view.scheduled_reason === "needs_reconnect" ? view : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `publication ${id} to wait for a reconnect` },
    );
    expect(waiting.status).toBe("SCHEDULED");
    const view = (await accountViews()).find((a) => a.account_id === accountId);
    expect(view?.status).toBe("needs_reconnect");
    expect(view?.error?.headline).toContain("will not send this account's token");
    expect(filesSeen.filter((line) => line.includes("/graph"))).toEqual([]);
  });
});
