import { randomInt, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { Server } from "node:http";
import path from "node:path";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { createKafka, createProducer } from "@/lib/kafka";
import type { Log } from "@/lib/log";
import { createRedis, type Redis } from "@/lib/redis";
import type { AccountView } from "@/lib/accounts/account";
import { paceKeys } from "@/lib/graph/pacing";
import type { PublicationView } from "@/lib/reels/publication";
import { publicationKeys } from "@/lib/reels/publication-record";
import { startPublicationConsumer } from "@/lib/reels/publication-consumer";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { inProcessWorker, waitFor } from "../helpers";
import { closeServers, listen, origin, sandboxHandler } from "../sandbox-server";

/**
 * Section 4 of issue 21, "behave as Meta advises", for real: the worker's publication consumer in
 * this process, the real Redis and broker, and the Graph sandbox over HTTP, slowed and throttled
 * through its control surface. The paces are short (a watch interval of WATCH_MS instead of a
 * minute, processing of a few seconds instead of four minutes) but keep Meta's proportions.
 */

const SAMPLES = path.resolve(__dirname, "../../public/samples");
const DATA_DIR = path.resolve(__dirname, "../../.test-data/reels-watch-and-pace");
const ACME_KEY = "acme-watch-key-0123456789abcdef";
const ACCOUNTS = ["slow", "busy", "throttled"] as const;
const account = Object.fromEntries(ACCOUNTS.map((name) => [name, `1784${randomInt(1e9, 1e10)}`])) as Record<
  (typeof ACCOUNTS)[number],
  string
>;
const token = (id: string) => `token-${id}-secret`;

/** The first round: POLL_ATTEMPTS reads POLL_MS apart; then one read per WATCH_MS (Meta: a minute). */
const POLL_MS = 50;
const POLL_ATTEMPTS = 6;
const WATCH_MS = 1000;
/** Four watch intervals, as four minutes are to Meta's one. */
const SLOW_PROCESSING_MS = 4 * WATCH_MS;
/** The gap between an account's calls near 100 % of a usage figure (half of it at 90 %). */
const SPACING_MS = 1000;

let redis: Redis;
let files: Server;
let graphServer: Server;
let sandbox: SandboxDeps;
let config: Config;
let producer: Producer;
const graphCalls: { at: number; method: string; path: string }[] = [];
const logs: unknown[] = [];
const consumers: RunningConsumer[] = [];
let routes: {
  reels: typeof import("@/app/api/reels/route");
  reel: typeof import("@/app/api/reels/[id]/route");
  accounts: typeof import("@/app/api/accounts/route");
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
  graphServer = await listen(
    sandboxHandler(
      () => sandbox,
      (call) => graphCalls.push(call),
    ),
  );
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `acme:${ACME_KEY}`,
    REEL_ACCOUNTS: ACCOUNTS.map((name) => `acme:${account[name]}:${token(account[name])}`).join(","),
    GRAPH_URL: `${origin(graphServer)}/graph`,
    REEL_POLL_INTERVAL_MS: String(POLL_MS),
    REEL_POLL_ATTEMPTS: String(POLL_ATTEMPTS),
    REEL_WATCH_INTERVAL_MS: String(WATCH_MS),
    GRAPH_PACE_SPACING_MS: String(SPACING_MS),
    SANDBOX_PROCESSING_MS: "300",
    ALLOW_PRIVATE_URLS: "true",
    REEL_PREFLIGHT: "off",
    DATA_DIR,
    WORKER_CONCURRENCY: "6",
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  const log: Log = (level, message, fields) => logs.push({ level, message, ...fields });
  sandbox = { redis, config, log, now: () => Date.now() };
  producer = createProducer(createKafka(config.KAFKA_BROKERS, "reels-watch-test"));
  await producer.connect();
  routes = {
    reels: await import("@/app/api/reels/route"),
    reel: await import("@/app/api/reels/[id]/route"),
    accounts: await import("@/app/api/accounts/route"),
  };
  const workerId = `reels-watch-${randomUUID().slice(0, 8)}`;
  consumers.push(
    await startPublicationConsumer(
      inProcessWorker(
        { config, redis, producer, log: (level, message, fields) => logs.push({ level, message, ...fields }) },
        workerId,
      ),
    ),
  );
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
  expect(JSON.stringify(logs)).not.toContain("-secret");
});

async function control(pathname: string, body: unknown): Promise<void> {
  const response = await fetch(`${origin(graphServer)}/graph/_sandbox/${pathname}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

const auth = { authorization: `Bearer ${ACME_KEY}` };

async function create(accountId: string): Promise<string> {
  const response = await routes.reels.POST(
    new Request("http://dispatch.test/api/reels", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        account_id: accountId,
        video_url: `${origin(files)}/reel-valid.mp4`,
        caption: `reel ${randomUUID()}`,
      }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return ((await response.json()) as { publication_id: string }).publication_id;
}

async function get(id: string): Promise<PublicationView> {
  const response = await routes.reel.GET(new Request(`http://dispatch.test/api/reels/${id}`, { headers: auth }), {
    params: Promise.resolve({ id }),
  });
  return (await response.json()) as PublicationView;
}

async function accountView(accountId: string): Promise<AccountView | undefined> {
  const response = await routes.accounts.GET(
    new Request("http://dispatch.test/api/accounts", { headers: auth }),
    undefined,
  );
  return ((await response.json()) as { data: AccountView[] }).data.find((a) => a.account_id === accountId);
}

const settled = (id: string, timeoutMs = 60_000) =>
  waitFor(
    async () => {
      const p = await get(id);
      return ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(p.status) ? p : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `publication ${id} to settle` },
  );

/** The sandbox's own record of an account's Graph calls (not the test's own to the control surface). */
const callsOf = (accountId: string, containerId?: string) =>
  graphCalls.filter(
    (c) =>
      !c.path.includes("/_sandbox/") &&
      (c.path.includes(accountId) || (containerId !== undefined && c.path.endsWith(`/${containerId}`))),
  );

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]);

describe("a container that takes long to process", () => {
  it("is published by itself: POLL_ATTEMPTS reads in the first round, then at most one read per watch interval, never TIMED_OUT", async () => {
    await control(`accounts/${account.slow}/processing`, { processing_ms: SLOW_PROCESSING_MS });
    const id = await create(account.slow);
    const watching = await waitFor(
      async () => {
        const p = await get(id);
        return p.steps.some((s) => s.step === "watching") ? p : undefined;
      },
      { timeoutMs: 30_000, what: "the first round of polls to end" },
    );
    expect(watching.status).toBe("PROCESSING");
    // No worker holds it between reads: the scheduler brings it back.
    await waitFor(
      async () =>
        (await redis.hget(publicationKeys.state(id), "active_run")) === "" &&
        (await redis.zscore(publicationKeys.scheduled, id)) !== null,
      {
        what: "the watched publication to be left to the scheduler",
      },
    );

    const p = await settled(id);
    expect(p.status).toBe("PUBLISHED");
    expect(p.steps.map((s) => s.step)).toEqual([
      "queued",
      "creating",
      "created",
      "watching",
      "publishing",
      "published",
    ]);
    expect(p.polls.length).toBeGreaterThan(POLL_ATTEMPTS);
    expect(p.polls.at(-1)?.status_code).toBe("FINISHED");
    expect(p.polls.slice(0, POLL_ATTEMPTS).every((x) => x.status_code === "IN_PROGRESS")).toBe(true);

    // What the sandbox saw: every status read of the container, by the time it arrived.
    const reads = graphCalls
      .filter((c) => c.method === "GET" && c.path === `/graph/${config.GRAPH_VERSION}/${p.container_id}`)
      .map((c) => c.at);
    expect(reads).toHaveLength(p.polls.length);
    const watched = gaps(reads.slice(POLL_ATTEMPTS - 1));
    expect(watched.length).toBeGreaterThanOrEqual(2);
    for (const gap of watched) expect(gap).toBeGreaterThanOrEqual(WATCH_MS - 5);
    // Processing took SLOW_PROCESSING_MS: the reads after the first round are paced, not the round itself.
    for (const gap of gaps(reads.slice(0, POLL_ATTEMPTS))) expect(gap).toBeLessThan(WATCH_MS);
  });
});

describe("Graph's usage headers", () => {
  it("above 80 % of a figure, the account's calls are spaced out", async () => {
    // 90 % of the account's call_count: calls half of SPACING_MS apart.
    await control(`accounts/${account.busy}/usage`, { call_count: 90, total_time: 20 });
    const id = await create(account.busy);
    const p = await settled(id);
    expect(p.status).toBe("PUBLISHED");
    const times = callsOf(account.busy, p.container_id ?? undefined).map((c) => c.at);
    expect(times.length).toBeGreaterThanOrEqual(4);
    // The first answer brings the first reading; from the second call on they are spaced.
    for (const gap of gaps(times.slice(1))) expect(gap).toBeGreaterThanOrEqual(SPACING_MS / 2 - 50);
    expect((await accountView(account.busy))?.rate_limited_until).toBeNull();
  });

  it("at the limit (estimated_time_to_regain_access), a refused call makes the publication wait; the next one is held without a call; both go on afterwards", async () => {
    await control(`accounts/${account.throttled}/usage`, { call_count: 100, estimated_time_to_regain_access: 1 });
    const first = await create(account.throttled);
    const waiting = await waitFor(
      async () => {
        const p = await get(first);
        return p.status === "SCHEDULED" && p.scheduled_reason === "rate_limited" ? p : undefined;
      },
      { timeoutMs: 30_000, what: "the refused publication to wait" },
    );
    const refusedAt = Date.now();
    // Graph said a minute: the publication waits at least that, not a worker.
    expect(Date.parse(waiting.publish_at ?? "")).toBeGreaterThanOrEqual(refusedAt + 50_000);
    const view = await accountView(account.throttled);
    expect(Date.parse(view?.rate_limited_until ?? "")).toBeGreaterThanOrEqual(refusedAt + 50_000);
    expect(Date.parse(view?.rate_limited_until ?? "")).toBeLessThanOrEqual(refusedAt + 65_000);

    // Another reel of the account: held before any call reaches Graph.
    const callsBefore = callsOf(account.throttled).length;
    const second = await create(account.throttled);
    const held = await waitFor(
      async () => {
        const p = await get(second);
        return p.status === "SCHEDULED" && p.scheduled_reason === "rate_limited" ? p : undefined;
      },
      { timeoutMs: 30_000, what: "the second publication to be held" },
    );
    expect(held.steps.at(-1)?.detail).toMatch(/usage headers put the account's calls at the limit/);
    expect(callsOf(account.throttled)).toHaveLength(callsBefore);

    // A minute is Meta's smallest unit: instead of sleeping it, the test lets the account's time come now.
    await control(`accounts/${account.throttled}/usage`, {});
    await redis.del(paceKeys.account(account.throttled));
    for (const id of [first, second]) {
      await redis.hset(publicationKeys.state(id), "publish_at", new Date().toISOString());
      await redis.zadd(publicationKeys.scheduled, Date.now(), id);
    }
    expect((await settled(first)).status).toBe("PUBLISHED");
    expect((await settled(second)).status).toBe("PUBLISHED");
    expect((await accountView(account.throttled))?.rate_limited_until).toBeNull();
  });
});
