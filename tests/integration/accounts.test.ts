import { randomBytes, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import type { Server } from "node:http";
import path from "node:path";
import type { Producer } from "kafkajs";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { createKafka, createProducer } from "@/lib/kafka";
import type { Log } from "@/lib/log";
import { createRedis, type Redis } from "@/lib/redis";
import type { AccountView } from "@/lib/accounts/account";
import { connectedAccountKeys } from "@/lib/accounts/connected-accounts";
import type { GraphClient } from "@/lib/graph/client";
import { GraphError } from "@/lib/graph/error";
import type { PublicationView } from "@/lib/reels/publication";
import { startPublicationConsumer } from "@/lib/reels/publication-consumer";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { expectProblem, inProcessWorker, readTopic, waitFor } from "../helpers";
import { TOPICS } from "@/lib/topics";
import { startTracing, stopTracing } from "@/lib/tracing";
import { closeServers, listen, origin, sandboxHandler } from "../sandbox-server";

/**
 * Connected accounts, expired tokens, the publishing quota and retries, on the real stack: the
 * route handlers, real Redis and broker, the worker's publication consumer in this process, and
 * the Graph sandbox over HTTP on 127.0.0.1, driven through its control surface (/graph/_sandbox/)
 * exactly as a person rehearsing would drive it.
 */

const SAMPLES = path.resolve(__dirname, "../../public/samples");
const DATA_DIR = path.resolve(__dirname, "../../.test-data/accounts");
const TENANT_KEY = "rehearsal-accounts-key-0123456789abcdef";
const RIVAL_KEY = "rival-accounts-key-0123456789abcdef";
const ADMIN_TOKEN = "sandbox-admin-token-0123456789";

let redis: Redis;
let files: Server;
let graphServer: Server;
let sandbox: SandboxDeps;
let config: Config;
let producer: Producer;
const logs: unknown[] = [];
const consumers: RunningConsumer[] = [];
const issuedTokens: string[] = [];
let routes: {
  accounts: typeof import("@/app/api/accounts/route");
  account: typeof import("@/app/api/accounts/[account_id]/route");
  reels: typeof import("@/app/api/reels/route");
  reel: typeof import("@/app/api/reels/[id]/route");
  retry: typeof import("@/app/api/reels/[id]/retry/route");
  posts: typeof import("@/app/api/accounts/[account_id]/posts/route");
};

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  files = await listen((req, res) => {
    res.writeHead(200, { "content-type": "video/mp4" });
    createReadStream(path.join(SAMPLES, path.basename(new URL(req.url ?? "/", "http://x").pathname)))
      .on("error", () => res.destroy())
      .pipe(res);
  });
  graphServer = await listen(sandboxHandler(() => sandbox));
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    // Tenants of this file's own: connected accounts live in the Redis every test file shares.
    API_KEYS: `rehearsal:${TENANT_KEY},rival:${RIVAL_KEY}`,
    GRAPH_URL: `${origin(graphServer)}/graph`,
    REEL_POLL_INTERVAL_MS: "50",
    REEL_POLL_ATTEMPTS: "200",
    SANDBOX_PROCESSING_MS: "300",
    SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    ALLOW_PRIVATE_URLS: "true",
    DATA_DIR,
    WORKER_CONCURRENCY: "6",
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  // Traced, so a retry's trace can be followed onto the topic (the spans themselves are not read).
  await startTracing({
    serviceName: "accounts-test",
    spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
  });
  const log: Log = (level, message, fields) => logs.push({ level, message, ...fields });
  sandbox = { redis, config, log, now: () => Date.now() };
  producer = createProducer(createKafka(config.KAFKA_BROKERS, "accounts-test"));
  await producer.connect();
  routes = {
    accounts: await import("@/app/api/accounts/route"),
    account: await import("@/app/api/accounts/[account_id]/route"),
    reels: await import("@/app/api/reels/route"),
    reel: await import("@/app/api/reels/[id]/route"),
    retry: await import("@/app/api/reels/[id]/retry/route"),
    posts: await import("@/app/api/accounts/[account_id]/posts/route"),
  };
  const workerId = `accounts-test-${randomUUID().slice(0, 8)}`;
  const ctx = inProcessWorker(
    { config, redis, producer, log: (level, message, fields) => logs.push({ level, message, workerId, ...fields }) },
    workerId,
  );
  consumers.push(await startPublicationConsumer(ctx));
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop(0).catch(() => {})));
  await settleSandboxProcessing(sandbox);
  await producer?.disconnect().catch(() => {});
  const { getServices } = await import("@/lib/web/services");
  const services = getServices();
  await (await services.producer()).disconnect().catch(() => {});
  services.redis.disconnect();
  await closeServers(files, graphServer);
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
  await stopTracing();
  // Access tokens never reach the logs.
  const logged = JSON.stringify(logs);
  for (const token of issuedTokens) expect(logged).not.toContain(token);
});

/** A call to the sandbox's control surface, from this machine. */
async function control(
  method: string,
  pathname: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${origin(graphServer)}/graph/_sandbox/${pathname}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function newSandboxAccount(username?: string): Promise<{ account_id: string; access_token: string }> {
  const response = await control("POST", "accounts", username ? { username } : {});
  expect(response.status).toBe(201);
  const account = (await response.json()) as { account_id: string; access_token: string };
  issuedTokens.push(account.access_token);
  return account;
}

async function newToken(accountId: string): Promise<string> {
  const response = await control("POST", `accounts/${accountId}/token`, { state: "valid" });
  expect(response.status).toBe(200);
  const { access_token } = (await response.json()) as { access_token: string };
  issuedTokens.push(access_token);
  return access_token;
}

const auth = (key = TENANT_KEY) => ({ authorization: `Bearer ${key}` });
const params = (id: string) => ({ params: Promise.resolve({ id }) });

async function connect(body: Record<string, unknown>, key = TENANT_KEY): Promise<Response> {
  return routes.accounts.POST(
    new Request("http://dispatch.test/api/accounts", {
      method: "POST",
      headers: { ...auth(key), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );
}

async function listAccounts(key = TENANT_KEY): Promise<AccountView[]> {
  const response = await routes.accounts.GET(
    new Request("http://dispatch.test/api/accounts", { headers: auth(key) }),
    undefined,
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: AccountView[] }).data;
}

async function submit(accountId: string, caption: string): Promise<string> {
  const response = await routes.reels.POST(
    new Request("http://dispatch.test/api/reels", {
      method: "POST",
      headers: { ...auth(), "content-type": "application/json" },
      body: JSON.stringify({ account_id: accountId, video_url: `${origin(files)}/reel-valid.mp4`, caption }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return ((await response.json()) as { publication_id: string }).publication_id;
}

async function get(id: string): Promise<PublicationView> {
  const response = await routes.reel.GET(
    new Request(`http://dispatch.test/api/reels/${id}`, { headers: auth() }),
    params(id),
  );
  return (await response.json()) as PublicationView;
}

async function reaches(
  id: string,
  check: (p: PublicationView) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<PublicationView> {
  return waitFor(
    async () => {
      const p = await get(id);
      return check(p) ? p : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `publication ${id}: ${what}` },
  );
}

const settled = (id: string) =>
  reaches(id, (p) => ["PUBLISHED", "FAILED", "TIMED_OUT", "CANCELLED"].includes(p.status), "settled");

async function sandboxMedia(accountId: string, token: string): Promise<{ id: string; caption: string }[]> {
  const response = await fetch(
    `${origin(graphServer)}/graph/v21.0/${accountId}/media?fields=id,caption&access_token=${token}`,
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { id: string; caption: string }[] }).data;
}

describe("the sandbox's control surface", () => {
  it("makes accounts whose tokens Graph accepts, then expires, revokes and replaces them as Meta answers", async () => {
    const { account_id, access_token } = await newSandboxAccount("rehearsal_one");
    const read = (token: string) =>
      fetch(`${origin(graphServer)}/graph/v21.0/${account_id}?fields=id,username&access_token=${token}`);
    expect(await (await read(access_token)).json()).toEqual({ id: account_id, username: "rehearsal_one" });

    expect((await control("POST", `accounts/${account_id}/token`, { state: "expired" })).status).toBe(200);
    const expired = await read(access_token);
    expect(expired.status).toBe(400);
    expect(((await expired.json()) as { error: unknown }).error).toMatchObject({
      code: 190,
      error_subcode: 463,
      type: "OAuthException",
      is_transient: false,
    });

    const fresh = await newToken(account_id);
    expect((await read(fresh)).status).toBe(200);
    expect(
      ((await (await read(access_token)).json()) as { error: { error_subcode: number } }).error.error_subcode,
    ).toBe(463); // the old one stays dead

    await control("POST", `accounts/${account_id}/token`, { state: "revoked" });
    expect(((await (await read(fresh)).json()) as { error: unknown }).error).toMatchObject({
      code: 190,
      error_subcode: 460,
    });
  });

  it("queues faults with is_transient as Meta sets it, sets the quota, and sends usage headers", async () => {
    const { account_id, access_token } = await newSandboxAccount();
    const fault = await control("POST", `accounts/${account_id}/faults`, { on: "media", code: 2, count: 2 });
    expect(fault.status).toBe(201);
    const createOnce = () =>
      fetch(`${origin(graphServer)}/graph/v21.0/${account_id}/media`, {
        method: "POST",
        body: new URLSearchParams({ media_type: "REELS", video_url: `${origin(files)}/reel-valid.mp4`, access_token }),
      });
    for (let i = 0; i < 2; i++) {
      const failed = await createOnce();
      expect(((await failed.json()) as { error: unknown }).error).toMatchObject({ code: 2, is_transient: true });
    }
    const created = await createOnce();
    expect(created.status).toBe(200);
    expect(JSON.parse(created.headers.get("x-business-use-case-usage") ?? "{}")[account_id][0]).toMatchObject({
      type: "instagram",
      estimated_time_to_regain_access: 0,
    });
    expect(JSON.parse(created.headers.get("x-app-usage") ?? "{}")).toHaveProperty("call_count");

    // Code 4 is the app's limit: X-App-Usage reports it used up; 80002 is the account's, with a time to regain access.
    await control("POST", `accounts/${account_id}/faults`, { on: "media", code: 4, count: 1 });
    const appLimited = await createOnce();
    expect(((await appLimited.json()) as { error: unknown }).error).toMatchObject({ code: 4, is_transient: true });
    expect(JSON.parse(appLimited.headers.get("x-app-usage") ?? "{}")).toMatchObject({ call_count: 100 });
    expect(JSON.parse(appLimited.headers.get("x-business-use-case-usage") ?? "{}")[account_id][0]).toMatchObject({
      estimated_time_to_regain_access: 0,
    });
    await control("POST", `accounts/${account_id}/faults`, { on: "media", code: 80002, count: 1 });
    const limited = await createOnce();
    expect(((await limited.json()) as { error: unknown }).error).toMatchObject({ code: 80002, is_transient: true });
    expect(JSON.parse(limited.headers.get("x-business-use-case-usage") ?? "{}")[account_id][0]).toMatchObject({
      call_count: 100,
      estimated_time_to_regain_access: 1,
    });

    expect((await control("PUT", `accounts/${account_id}/quota`, { quota_total: 7 })).status).toBe(200);
    const limit = await fetch(
      `${origin(graphServer)}/graph/v21.0/${account_id}/content_publishing_limit?fields=quota_usage,config&access_token=${access_token}`,
    );
    expect(await limit.json()).toEqual({
      data: [{ quota_usage: 0, config: { quota_total: 7, quota_duration: 86400 } }],
    });
  });

  it("answers only this machine, or a caller with the admin token; refuses bad input with problem+json", async () => {
    const proxied = await control("POST", "accounts", {}, { "x-forwarded-for": "203.0.113.9" });
    await expectProblem(proxied, 403);
    const withToken = await control(
      "POST",
      "accounts",
      {},
      { "x-forwarded-for": "203.0.113.9", authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(withToken.status).toBe(201);
    issuedTokens.push(((await withToken.json()) as { access_token: string }).access_token);
    await expectProblem(
      await control(
        "POST",
        "accounts",
        {},
        { "x-forwarded-for": "203.0.113.9", authorization: "Bearer wrong-token-0123456789" },
      ),
      403,
    );
    // Read as /metrics reads it: one remote entry anywhere means a proxy forwarded a remote client.
    await expectProblem(await control("POST", "accounts", {}, { "x-forwarded-for": "203.0.113.9, 127.0.0.1" }), 403);
    expect((await control("POST", "accounts", {}, { "x-forwarded-for": "127.0.0.1, ::1" })).status).toBe(201);

    const { account_id } = await newSandboxAccount();
    await expectProblem(await control("POST", `accounts/${account_id}/token`, { state: "sleepy" }), 422);
    await expectProblem(
      await control("POST", `accounts/${account_id}/faults`, { on: "media", code: 1, count: 0 }),
      422,
    );
    await expectProblem(await control("GET", `accounts/${account_id}/quota`), 405);
    await expectProblem(await control("POST", "accounts/999999999/token", { state: "valid" }), 404);
    await expectProblem(await control("POST", "nothing-here", {}), 404);
  });
});

describe("the sandbox's control surface and its own fetcher", () => {
  it("refuses the fetcher whatever the path, so a tenant's video_url learns nothing from it", async () => {
    const { account_id, access_token } = await newSandboxAccount();
    const statuses: string[] = [];
    for (const target of [`accounts/${account_id}/token`, "accounts/999999999/token", "accounts"]) {
      const form = new URLSearchParams({
        media_type: "REELS",
        video_url: `${origin(graphServer)}/graph/_sandbox/${target}`,
        access_token,
      });
      const { id } = (await (
        await fetch(`${origin(graphServer)}/graph/v21.0/${account_id}/media`, { method: "POST", body: form })
      ).json()) as { id: string };
      const url = `${origin(graphServer)}/graph/v21.0/${id}?fields=status_code,status&access_token=${access_token}`;
      statuses.push(
        await waitFor(
          async () => {
            const read = (await (await fetch(url)).json()) as { status_code: string; status: string };
            return read.status_code === "IN_PROGRESS" ? undefined : read.status;
          },
          { what: `the container fetching ${target} to settle` },
        ),
      );
    }
    expect(statuses).toEqual(
      Array(3).fill(
        "Error: Media upload has failed with error code 2207052 (the video could not be downloaded: the server answered HTTP 403)",
      ),
    );
  });
});

describe("connected accounts", () => {
  it("connects an account after Graph accepted its token, lists it with username and quota, never shows the token, and disconnects it", async () => {
    const { account_id, access_token } = await newSandboxAccount("acme_brand");
    const refused = await connect({ account_id, access_token: "not-a-token" });
    const problem = await expectProblem(refused, 422);
    expect(problem.errors?.[0]).toMatchObject({ path: "access_token" });

    const response = await connect({ account_id, access_token, label: "Brand" });
    expect(response.status).toBe(201);
    const text = await response.text();
    expect(text).not.toContain(access_token);
    expect(JSON.parse(text)).toMatchObject({
      account_id,
      label: "Brand",
      username: "acme_brand",
      status: "connected",
      quota: { quota_usage: 0, quota_total: 100, quota_duration: 86400 },
    });

    const listed = (await listAccounts()).find((a) => a.account_id === account_id);
    expect(listed).toMatchObject({ account_id, username: "acme_brand", status: "connected" });
    expect(JSON.stringify(await listAccounts())).not.toContain(access_token);
    // At rest the token is sealed, not stored as given.
    expect(JSON.stringify(await redis.hgetall(connectedAccountKeys.record(account_id)))).not.toContain(access_token);
    expect((await stat(path.join(DATA_DIR, "accounts-key"))).mode & 0o777).toBe(0o600);
    expect((await readFile(path.join(DATA_DIR, "accounts-key"), "utf8")).trim()).toMatch(/^[0-9a-f]{64}$/);

    // Another tenant neither sees it nor can take it.
    expect((await listAccounts(RIVAL_KEY)).map((a) => a.account_id)).not.toContain(account_id);
    await expectProblem(await connect({ account_id, access_token }, RIVAL_KEY), 409);

    const removed = await routes.account.DELETE(
      new Request(`http://dispatch.test/api/accounts/${account_id}`, { method: "DELETE", headers: auth() }),
      { params: Promise.resolve({ account_id }) },
    );
    expect(removed.status).toBe(204);
    expect((await listAccounts()).map((a) => a.account_id)).not.toContain(account_id);
    const again = await routes.account.DELETE(
      new Request(`http://dispatch.test/api/accounts/${account_id}`, { method: "DELETE", headers: auth() }),
      { params: Promise.resolve({ account_id }) },
    );
    await expectProblem(again, 404);
  });

  it("an expired token marks the account needs_reconnect; its publications wait, then publish once it is reconnected", async () => {
    const { account_id, access_token } = await newSandboxAccount();
    expect((await connect({ account_id, access_token })).status).toBe(201);
    await control("POST", `accounts/${account_id}/token`, { state: "expired" });

    const captions = [`waits ${randomUUID()}`, `waits ${randomUUID()}`];
    const ids = [];
    for (const caption of captions) ids.push(await submit(account_id, caption));
    for (const id of ids) {
      const waiting = await reaches(
        id,
        (p) => p.status === "SCHEDULED" && p.scheduled_reason === "needs_reconnect",
        "waiting for a reconnect",
      );
      expect(waiting.error).toBeNull();
      expect(waiting.steps.map((s) => s.step)).not.toContain("failed");
    }
    const marked = (await listAccounts()).find((a) => a.account_id === account_id);
    expect(marked).toMatchObject({
      status: "needs_reconnect",
      error: { code: 190, subcode: 463, classification: "reconnect-account" },
    });

    const fresh = await newToken(account_id);
    const reconnected = await connect({ account_id, access_token: fresh });
    expect(reconnected.status).toBe(201);
    expect(await reconnected.json()).toMatchObject({ status: "connected" });

    const done = await Promise.all(ids.map((id) => settled(id)));
    expect(done.map((p) => p.status)).toEqual(["PUBLISHED", "PUBLISHED"]);
    for (const p of done) {
      const steps = p.steps.map((s) => s.step);
      expect(steps.indexOf("waiting")).toBeGreaterThan(-1);
      expect(steps.indexOf("reconnected")).toBeGreaterThan(steps.indexOf("waiting"));
      expect(steps.at(-1)).toBe("published");
    }
    const media = await sandboxMedia(account_id, fresh);
    expect(media.map((m) => m.caption).sort()).toEqual([...captions].sort());
  });
});

/**
 * The services' Graph client as the web server may hold it: made by another copy of lib (Next
 * bundles it into instrumentation and each route, and the services come from whichever ran first),
 * so the errors it throws are that copy's classes.
 */
async function graphOfAnotherCopy(graph: GraphClient): Promise<GraphClient> {
  // @ts-expect-error a query string makes vite load a second copy of the module
  const copy = (await import("@/lib/graph/error?another-copy")) as typeof import("@/lib/graph/error");
  expect(copy.GraphError).not.toBe(GraphError);
  const asCopy = (error: unknown) =>
    error instanceof GraphError ? copy.GraphError.fromResponse(error.toBody(), error.status) : error;
  const calls = Object.entries(graph).map(([name, call]: [string, (...args: unknown[]) => Promise<unknown>]) => [
    name,
    (...args: unknown[]) =>
      call(...args).catch((error: unknown) => {
        throw asCopy(error);
      }),
  ]);
  return Object.fromEntries(calls) as GraphClient;
}

describe("Graph's errors in a web server that bundled lib twice", () => {
  it("a refused token is a 422, an expired one marks the account, and the posts say Graph refused, not that it did not answer", async () => {
    const services = (await import("@/lib/web/services")).getServices();
    const own = services.graphs;
    const copy = await graphOfAnotherCopy(own.default);
    services.graphs = { default: copy, forAccount: () => copy };
    try {
      const { account_id, access_token } = await newSandboxAccount();
      const refused = await expectProblem(await connect({ account_id, access_token: "not-a-token" }), 422);
      expect(refused.errors?.[0]).toMatchObject({
        path: "access_token",
        message: expect.stringMatching(/^Graph refused it: .*\(190/),
      });

      expect((await connect({ account_id, access_token })).status).toBe(201);
      await control("POST", `accounts/${account_id}/token`, { state: "expired" });
      const posts = await routes.posts.GET(
        new Request(`http://dispatch.test/api/accounts/${account_id}/posts`, { headers: auth() }),
        { params: Promise.resolve({ account_id }) },
      );
      const problem = await expectProblem(posts, 503);
      expect(problem.detail).toMatch(/^Graph refused: /);

      // The list asks Graph again once its cached quota and username are gone: the refusal marks the account.
      await redis.del(connectedAccountKeys.quota(account_id), connectedAccountKeys.usernameRead(account_id));
      const listed = (await listAccounts()).find((a) => a.account_id === account_id);
      expect(listed).toMatchObject({
        status: "needs_reconnect",
        error: { code: 190, classification: "reconnect-account" },
      });
    } finally {
      services.graphs = own;
    }
  });
});

describe("the publishing quota", () => {
  it("with a quota of 2 the third publication is SCHEDULED with reason quota, not FAILED", async () => {
    const { account_id, access_token } = await newSandboxAccount();
    await control("PUT", `accounts/${account_id}/quota`, { quota_total: 2 });
    expect((await connect({ account_id, access_token })).status).toBe(201);

    const first = [await submit(account_id, `q1 ${randomUUID()}`), await submit(account_id, `q2 ${randomUUID()}`)];
    expect((await Promise.all(first.map(settled))).map((p) => p.status)).toEqual(["PUBLISHED", "PUBLISHED"]);
    const third = await submit(account_id, `q3 ${randomUUID()}`);
    const waiting = await reaches(
      third,
      (p) => p.status !== "QUEUED" && p.status !== "CREATING" && p.status !== "PROCESSING" && p.status !== "PUBLISHING",
      "to wait or settle",
    );
    // Refused before any container was made: the quota is read first.
    expect(waiting).toMatchObject({ status: "SCHEDULED", scheduled_reason: "quota", error: null, container_id: null });
    // Tried again when the window frees the oldest slot: 24 h after the first publish.
    const publishedAt = Date.parse((await get(first[0]!)).updated_at);
    expect(Math.abs(Date.parse(waiting.publish_at ?? "") - (publishedAt + 86_400_000))).toBeLessThan(60_000);
    expect(await sandboxMedia(account_id, access_token)).toHaveLength(2);
    expect((await listAccounts()).find((a) => a.account_id === account_id)?.quota).toEqual({
      quota_usage: 2,
      quota_total: 2,
      quota_duration: 86400,
    });
  });
});

describe("retries", () => {
  it("a temporary publish error (24/2207008) is retried and the reel is published once", async () => {
    const { account_id, access_token } = await newSandboxAccount();
    expect((await connect({ account_id, access_token })).status).toBe(201);
    await control("POST", `accounts/${account_id}/faults`, {
      on: "media_publish",
      code: 24,
      error_subcode: 2207008,
      count: 1,
    });
    const caption = `flaky ${randomUUID()}`;
    const p = await settled(await submit(account_id, caption));
    expect(p.status).toBe("PUBLISHED");
    expect(p.steps.filter((s) => s.step === "publishing")).toHaveLength(2);
    expect(p.steps.some((s) => s.step === "retrying" && /2207008/.test(s.detail))).toBe(true);
    expect(
      (await sandboxMedia(account_id, access_token)).filter((m) => m.caption === caption).map((m) => m.id),
    ).toEqual([p.post_id]);
  });

  it("POST /api/reels/{id}/retry publishes a FAILED publication with a new container, same id, history kept", async () => {
    const { account_id, access_token } = await newSandboxAccount();
    expect((await connect({ account_id, access_token })).status).toBe(201);
    await control("POST", `accounts/${account_id}/faults`, { on: "media", code: 100, count: 1 });
    const caption = `retry ${randomUUID()}`;
    const id = await submit(account_id, caption);
    const failed = await settled(id);
    expect(failed).toMatchObject({ status: "FAILED", error: { code: 100 } });

    const traceId = randomBytes(16).toString("hex");
    const retried = await routes.retry.POST(
      new Request(`http://dispatch.test/api/reels/${id}/retry`, {
        method: "POST",
        headers: { ...auth(), traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` },
      }),
      params(id),
    );
    expect(retried.status).toBe(202);
    expect(await retried.json()).toMatchObject({ publication_id: id, status: "QUEUED", error: null });
    // The retried run's message carries the retry's trace, as a submitted one carries the submit's.
    const sent = (
      await readTopic(config.KAFKA_BROKERS.join(","), TOPICS.reels.name, (messages) =>
        messages.some(
          (m) => m.value?.toString().includes(id) && String(m.headers?.traceparent ?? "").includes(traceId),
        ),
      )
    ).filter((m) => m.value?.toString().includes(id));
    expect(sent).toHaveLength(2);
    expect(String(sent[1]!.headers!.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const p = await settled(id);
    expect(p.status).toBe("PUBLISHED");
    expect(p.publication_id).toBe(id);
    // GRAPH_URL is this test's server, not the app's own sandbox: the video is preflighted too.
    const steps = p.steps.map((s) => s.step).filter((step) => step !== "preflight");
    expect(steps.slice(0, 3)).toEqual(["queued", "creating", "failed"]);
    expect(steps.slice(3)).toEqual(["retried", "creating", "created", "publishing", "published"]);
    expect(p.steps.map((s) => s.seq)).toEqual([...p.steps.map((s) => s.seq)].sort((a, b) => a - b));
    expect((await sandboxMedia(account_id, access_token)).filter((m) => m.caption === caption)).toHaveLength(1);

    // A PUBLISHED publication is not retried.
    const again = await routes.retry.POST(
      new Request(`http://dispatch.test/api/reels/${id}/retry`, { method: "POST", headers: auth() }),
      params(id),
    );
    await expectProblem(again, 409);
  });
});
