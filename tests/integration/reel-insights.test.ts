import { randomInt, randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { loadAccountsKey } from "@/lib/accounts/token-cipher";
import { parseConfig } from "@/lib/config";
import { createRedis, type Redis } from "@/lib/redis";
import type { GraphAccount } from "@/lib/graph/client";
import { createGraphHosts, type GraphHosts } from "@/lib/graph/hosts";
import { registerPublishedReel } from "@/lib/reels/insights/insights-store";
import { insightsKeys } from "@/lib/reels/insights/insights-store";
import { SWEEP_LEASE_KEY, sweepReelInsights } from "@/lib/reels/insights/insights-sweep";
import { takeLease } from "@/lib/lease";
import { REEL_INSIGHT_METRICS } from "@/lib/graph/insights-metrics";
import { listAccountInsights, readReelInsights } from "@/lib/reels/insights/read-reel-insights";
import type { InsightsDeps } from "@/lib/reels/insights/refresh-reel-insights";
import { publicationKeys, type PublicationHash } from "@/lib/reels/publication-record";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { seededInsights } from "@/lib/graph/sandbox/insights-growth";
import { createSandboxAccount } from "@/lib/graph/sandbox/sandbox-accounts";
import { issueToken } from "@/lib/graph/sandbox/sandbox-tokens";
import { readMediaRecord } from "@/lib/graph/sandbox/store";
import { waitFor } from "../helpers";
import { serveSandbox, type SandboxServer } from "../sandbox-server";

/**
 * A reel's insights read through the Graph client from the sandbox over real HTTP, cached in the
 * real Redis, with one injectable clock for the sandbox and Dispatch: the 15-minute rule and the
 * daily sweep are checked by moving the clock, never by sleeping.
 */

const MIN = 60_000;
const LAG_MS = 10 * MIN;
const SAMPLE = path.resolve(__dirname, "../../public/samples/reel-valid.mp4");
const DATA_DIR = path.resolve(__dirname, "../../.test-data/reel-insights");

let redis: Redis;
let server: SandboxServer;
let sandbox: SandboxDeps;
/** Moved by hand only: a reading and the figures expected of it see the same time. */
const clock = { at: Date.now() };
const now = () => clock.at;
const tenantId = "acme";
const accountId = `1785${randomInt(1e9, 1e10)}`;
const token = `insights-token-${accountId}`;
let account: GraphAccount;
let graphs: GraphHosts;
let deps: InsightsDeps;
/** Every insights call that reached the sandbox, by media id. */
const insightsCalls: string[] = [];

beforeAll(async () => {
  redis = createRedis(inject("redisUrl"));
  const config = parseConfig({
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: "127.0.0.1:1",
    API_KEYS: `${tenantId}:acme-key-0123456789abcdef`,
    REEL_ACCOUNTS: `${tenantId}:${accountId}:${token}`,
    SANDBOX_PROCESSING_MS: "50",
    DATA_DIR,
  });
  sandbox = { redis, config, log: () => {}, now, limits: { insightsLagMs: LAG_MS } };
  server = await serveSandbox(sandbox);
  graphs = createGraphHosts({
    graphUrl: `${server.url}/graph`,
    otherHosts: [],
    version: config.GRAPH_VERSION,
    fetch: (input, init) => {
      const url = new URL(String(input));
      if (url.pathname.endsWith("/insights")) insightsCalls.push(url.pathname.split("/").at(-2)!);
      return fetch(input, init);
    },
  });
  account = { accountId, accessToken: token };
  deps = {
    redis,
    graphs,
    connected: new ConnectedAccounts(redis, loadAccountsKey(config), config.REEL_ACCOUNTS, now),
    now,
  };
});

afterAll(async () => {
  await settleSandboxProcessing(sandbox);
  await server.close();
  await redis.quit();
});

/** A reel published in the sandbox through the Graph client (resumable upload of the sample), and Dispatch's record of it. */
async function publishReel(
  caption: string,
  as: GraphAccount = account,
): Promise<{ publicationId: string; mediaId: string; publishedAt: number }> {
  const graph = graphs.default;
  const account = as;
  const created = await graph.createContainer(account, { resumable: true, caption, shareToFeed: true });
  await graph.uploadVideo(account, created.uri!, { path: SAMPLE, size: (await stat(SAMPLE)).size });
  await waitFor(async () => (await graph.readContainer(account, created.id!)).statusCode === "FINISHED", {
    what: "the container to finish",
  });
  const { id: mediaId } = await graph.publishContainer(account, created.id!);
  const publishedAt = (await readMediaRecord(redis, mediaId))!.timestamp;
  const publicationId = randomUUID();
  const at = new Date(publishedAt).toISOString();
  const record: PublicationHash = {
    publication_id: publicationId,
    tenant_id: tenantId,
    account_id: account.accountId,
    caption,
    status: "PUBLISHED",
    created_at: at,
    updated_at: at,
    post_id: mediaId,
  };
  await redis.hset(publicationKeys.state(publicationId), record);
  return { publicationId, mediaId, publishedAt };
}

const callsFor = (mediaId: string) => insightsCalls.filter((id) => id === mediaId).length;

/** What the sandbox gives the reel at the clock's time now, as Dispatch shows it. */
const expectedAt = (mediaId: string, publishedAt: number) => {
  const grown = seededInsights(mediaId, now() - publishedAt);
  return Object.fromEntries(REEL_INSIGHT_METRICS.map((m) => [m, grown[m]]));
};

async function control(pathname: string, body: unknown): Promise<number> {
  const response = await fetch(`${server.url}/graph/_sandbox/${pathname}`, {
    method: pathname.endsWith("/faults") ? "POST" : "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return response.status;
}

describe("a published reel's insights", () => {
  it("say 'pending' while Graph's figures lag, then show the seeded figures, asking Graph at most every 15 minutes", async () => {
    const { publicationId, mediaId, publishedAt } = await publishReel("insights over time");

    const first = await readReelInsights(deps, tenantId, publicationId);
    expect(first).toMatchObject({ status: "pending", metrics: null, media_id: mediaId, fetched_at: null });
    expect(callsFor(mediaId)).toBe(1);

    // Two views at once, 5 minutes on: neither asks Graph.
    clock.at += 5 * MIN;
    const [a, b] = await Promise.all([
      readReelInsights(deps, tenantId, publicationId),
      readReelInsights(deps, tenantId, publicationId),
    ]);
    expect([a.status, b.status]).toEqual(["pending", "pending"]);
    expect(callsFor(mediaId)).toBe(1);

    // Past the lag and 15 minutes after the first reading: one of two views asks, and the figures are the seeded ones.
    clock.at += 11 * MIN;
    const [c, d] = await Promise.all([
      readReelInsights(deps, tenantId, publicationId),
      readReelInsights(deps, tenantId, publicationId),
    ]);
    expect(callsFor(mediaId)).toBe(2);
    const read =
      [c, d].find((v) => v.status === "available") ?? (await readReelInsights(deps, tenantId, publicationId));
    expect(read.metrics).toEqual(expectedAt(mediaId, publishedAt));
    expect(read.metrics!.views).toBeGreaterThan(0);
    expect(Date.parse(read.next_refresh_at!) - Date.parse(read.checked_at!)).toBe(15 * MIN);

    // Figures set through the control surface show only once the next reading is due.
    expect(await control(`media/${mediaId}/insights`, { views: 424_242, likes: 4242 })).toBe(200);
    clock.at += 14 * MIN;
    const cached = await readReelInsights(deps, tenantId, publicationId);
    expect(cached.metrics).toEqual(read.metrics);
    expect(callsFor(mediaId)).toBe(2);
    clock.at += MIN;
    const fresh = await readReelInsights(deps, tenantId, publicationId);
    expect(callsFor(mediaId)).toBe(3);
    expect(fresh.metrics).toMatchObject({ views: 424_242, likes: 4242 });
    expect(fresh.metrics!.reach).toBe(seededInsights(mediaId, now() - publishedAt).reach);
  });

  it("say so when the token lacks the insights permission, keeping the last figures", async () => {
    const { publicationId, mediaId } = await publishReel("insights without permission");
    clock.at += LAG_MS;
    const before = await readReelInsights(deps, tenantId, publicationId);
    expect(before.status).toBe("available");

    expect(await control(`accounts/${accountId}/faults`, { on: "insights", code: 10, count: 1 })).toBe(201);
    clock.at += 15 * MIN;
    const refused = await readReelInsights(deps, tenantId, publicationId);
    expect(refused.status).toBe("no-permission");
    expect(refused.message).toMatch(/insights permission/);
    expect(refused.metrics).toEqual(before.metrics);
    expect(callsFor(mediaId)).toBe(2);
  });

  it("say to reconnect to allow insights for an account whose person did not allow them, as the sandbox refuses the read", async () => {
    // A Page token from Facebook Login with the insights permission unticked (or from before Dispatch asked
    // for it); Facebook Login, as this test's reels go up resumably (Instagram Login's may not).
    const { account_id } = await createSandboxAccount(sandbox, { username: "no_insights" });
    const limited = await issueToken(sandbox, account_id, {
      login: "facebook",
      scopes: ["instagram_basic", "instagram_content_publish", "pages_show_list", "pages_read_engagement"],
    });
    const connected = await deps.connected.connect({
      tenantId,
      accountId: account_id,
      accessToken: limited,
      login: "facebook",
      graphUrl: `${server.url}/graph`,
    });
    expect(connected).not.toBe("taken");
    const { publicationId, mediaId } = await publishReel("insights never allowed", {
      accountId: account_id,
      accessToken: limited,
    });
    clock.at += LAG_MS;
    const refused = await readReelInsights(deps, tenantId, publicationId);
    expect(callsFor(mediaId)).toBe(1);
    expect(refused.status).toBe("no-permission");
    expect(refused.message).toMatch(/^Reconnect the account to allow insights/);
    expect(refused.metrics).toBeNull();
  });

  it("are refused by the sandbox for a retired metric with Meta's error 100", async () => {
    const { mediaId } = await publishReel("retired metric");
    const url = `${server.url}/graph/v22.0/${mediaId}/insights?metric=views,plays&access_token=${token}`;
    const response = await fetch(url);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(100);
    expect(body.error.message).toMatch(/^\(#100\) metric\[1\] must be one of the following values: views, /);
    expect(body.error.message).not.toContain("plays");
  });

  it("are not read for another tenant's publication, nor before it is published", async () => {
    const { publicationId } = await publishReel("another tenant's");
    await expect(readReelInsights(deps, "globex", publicationId)).rejects.toMatchObject({ code: "not-found" });
    await redis.hset(publicationKeys.state(publicationId), "status", "PROCESSING");
    await expect(readReelInsights(deps, tenantId, publicationId)).rejects.toMatchObject({ code: "conflict" });
  });
});

describe("the daily sweep", () => {
  it("reads each of the last 30 days' reels once a day, a day after publishing first, under one lease across the cluster, given up after each pass", async () => {
    await redis.del(insightsKeys.recent);
    const reels = [await publishReel("swept one"), await publishReel("swept two")];
    for (const reel of reels)
      await registerPublishedReel(
        redis,
        { ...reel, tenantId, accountId, caption: "", permalink: null, publishedAt: reel.publishedAt },
        now(),
      );
    const options = { owner: `worker-a-${randomUUID()}`, leaseMs: 60_000, batch: 10 };
    const callsBefore = insightsCalls.length;

    expect(await sweepReelInsights(deps, options)).toEqual({ read: 0, held: true });
    expect(await redis.exists(SWEEP_LEASE_KEY)).toBe(0);
    clock.at += 24 * 60 * MIN;
    // While another worker holds the lease (mid-pass, or dead before giving it up) a sweep reads nothing,
    // until the lease lapses.
    const dead = `worker-dead-${randomUUID()}`;
    expect(await takeLease(redis, SWEEP_LEASE_KEY, dead, 1000)).toBe("");
    expect(await sweepReelInsights(deps, options)).toEqual({ read: 0, held: false });
    await waitFor(async () => (await redis.exists(SWEEP_LEASE_KEY)) === 0, {
      what: "the dead worker's lease to lapse",
    });
    expect(await sweepReelInsights(deps, options)).toEqual({ read: 2, held: true });
    // Given up at the end of the pass: another worker's tick sweeps at once (nothing is due any more).
    expect(await redis.exists(SWEEP_LEASE_KEY)).toBe(0);
    expect(await sweepReelInsights(deps, { ...options, owner: `worker-b-${randomUUID()}` })).toEqual({
      read: 0,
      held: true,
    });
    expect(insightsCalls.length - callsBefore).toBe(2);
    // A pass that fails gives the lease up too.
    const broken = {
      ...deps,
      now: (): number => {
        throw new Error("the clock failed");
      },
    };
    await expect(sweepReelInsights(broken, options)).rejects.toThrow("the clock failed");
    expect(await redis.exists(SWEEP_LEASE_KEY)).toBe(0);

    const rows = await listAccountInsights(redis, tenantId, accountId, { sort: "views", order: "desc", limit: 500 });
    const swept = rows.filter((r) => reels.some((reel) => reel.mediaId === r.media_id));
    expect(swept.map((r) => r.status)).toEqual(["available", "available"]);
    for (const row of swept)
      expect(row.metrics).toEqual(expectedAt(row.media_id, reels.find((r) => r.mediaId === row.media_id)!.publishedAt));
    const views = rows.map((r) => r.metrics?.views ?? null);
    const known = views.filter((v): v is number => v !== null);
    expect(known).toEqual([...known].sort((x, y) => y - x));
    expect(views.slice(known.length).every((v) => v === null)).toBe(true);
  });
});
