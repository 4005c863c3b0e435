import { randomInt, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import path from "node:path";
import { Partitioners, type PartitionMetadata, type Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { createKafka, createProducer } from "@/lib/kafka";
import type { Log } from "@/lib/log";
import { createRedis, type Redis } from "@/lib/redis";
import type { PublicationView } from "@/lib/reels/publication";
import { publicationKeys } from "@/lib/reels/publication-record";
import { startPublicationConsumer } from "@/lib/reels/publication-consumer";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { usernameOf } from "@/lib/graph/sandbox/sandbox-accounts";
import { TOPICS } from "@/lib/topics";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { inProcessWorker, readSse, waitFor } from "../helpers";
import { closeServers, listen, origin, sandboxHandler } from "../sandbox-server";

/**
 * The whole publish flow for real: the route handlers, the real Redis and broker, the worker's
 * publication consumer in this process, and the Graph sandbox served over HTTP on 127.0.0.1
 * (fetching the committed sample videos from another local server). Each test uses an account of
 * its own, so Graph calls can be counted per test.
 */

const SAMPLES = path.resolve(__dirname, "../../public/samples");
const FIXTURES = path.resolve(__dirname, "../fixtures");
const DATA_DIR = path.resolve(__dirname, "../../.test-data/reels-flow");
const ACME_KEY = "acme-reels-key-0123456789abcdef";
const GLOBEX_KEY = "globex-reels-key-0123456789abcdef";
const ACCOUNTS = [
  "valid",
  "short",
  "unreachable",
  "crash",
  "timeout",
  "scheduled",
  "stream",
  "slow",
  "neighbour",
  "cancel",
  "edit",
  "params",
  "offset",
  "globex",
] as const;
const account = Object.fromEntries(ACCOUNTS.map((name) => [name, `1784${randomInt(1e9, 1e10)}`])) as Record<
  (typeof ACCOUNTS)[number],
  string
>;
const partitionOf = (key: string) =>
  Partitioners.DefaultPartitioner()({
    topic: TOPICS.reels.name,
    partitionMetadata: Array.from({ length: TOPICS.reels.partitions }, (_, i) => ({
      partitionId: i,
      leader: 0,
    })) as PartitionMetadata[],
    message: { key, value: null },
  });
// The neighbour must sit on another partition than the slow account for the test of partition independence.
while (partitionOf(account.neighbour) === partitionOf(account.slow)) account.neighbour = `1784${randomInt(1e9, 1e10)}`;
const token = (id: string) => `token-${id}-secret`;

let redis: Redis;
let files: Server;
let graphServer: Server;
let filesOrigin: string;
let closedPortUrl: string;
let sandbox: SandboxDeps;
let config: Config;
let producer: Producer;
const graphCalls: string[] = [];
const gates = new Map<string, () => void>();
/** Small, so a held download outlasts it; large enough for the samples' real processing. */
const POLL_ATTEMPTS = 50;
/** After the first round, a container still processing is read once per this (Meta's advice: a minute). */
const WATCH_MS = 500;
const logs: unknown[] = [];
const consumers: RunningConsumer[] = [];
let routes: {
  reels: typeof import("@/app/api/reels/route");
  reel: typeof import("@/app/api/reels/[id]/route");
  resume: typeof import("@/app/api/reels/[id]/resume/route");
  events: typeof import("@/app/api/reels/[id]/events/route");
  accounts: typeof import("@/app/api/accounts/route");
};

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  files = await listen(serveSample);
  filesOrigin = origin(files);
  const closed = await listen((_req, res) => res.end());
  closedPortUrl = `${origin(closed)}/reel-valid.mp4`;
  await new Promise((resolve) => closed.close(resolve));

  graphServer = await listen(
    sandboxHandler(
      () => sandbox,
      (call) => graphCalls.push(`${call.method} ${call.path}`),
    ),
  );
  const reelAccounts = ACCOUNTS.map(
    (name) => `${name === "globex" ? "globex" : "acme"}:${account[name]}:${token(account[name])}`,
  ).join(",");
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `acme:${ACME_KEY},globex:${GLOBEX_KEY}`,
    REEL_ACCOUNTS: reelAccounts,
    GRAPH_URL: `${origin(graphServer)}/graph`,
    REEL_POLL_INTERVAL_MS: "50",
    REEL_POLL_ATTEMPTS: String(POLL_ATTEMPTS),
    REEL_WATCH_INTERVAL_MS: String(WATCH_MS),
    SANDBOX_PROCESSING_MS: "600",
    ALLOW_PRIVATE_URLS: "true",
    // These tests exercise the sandbox's own processing; uploads.test.ts covers the worker's preflight.
    REEL_PREFLIGHT: "off",
    DATA_DIR,
    WORKER_CONCURRENCY: "6",
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  const log: Log = (level, message, fields) => logs.push({ level, message, ...fields });
  sandbox = { redis, config, log, now: () => Date.now() };
  producer = createProducer(createKafka(config.KAFKA_BROKERS, "reels-flow-test"));
  await producer.connect();
  routes = {
    reels: await import("@/app/api/reels/route"),
    reel: await import("@/app/api/reels/[id]/route"),
    resume: await import("@/app/api/reels/[id]/resume/route"),
    events: await import("@/app/api/reels/[id]/events/route"),
    accounts: await import("@/app/api/accounts/route"),
  };
  consumers.push(await startWorker());
});

afterAll(async () => {
  for (const open of gates.values()) open();
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
  // Access tokens never reach the logs.
  expect(JSON.stringify(logs)).not.toContain("-secret");
});

/** Serves the samples (and `/fixtures/{file}`, the cover JPEG); `/gate/{name}/{file}` holds the answer until the test opens that gate. */
function serveSample(req: IncomingMessage, res: ServerResponse) {
  const parts = new URL(req.url ?? "/", "http://x").pathname.split("/").filter(Boolean);
  if (parts[0] === "fixtures") {
    res.writeHead(200, { "content-type": "image/jpeg" });
    createReadStream(path.join(FIXTURES, path.basename(parts.at(-1) ?? "")))
      .on("error", () => res.destroy())
      .pipe(res);
    return;
  }
  const send = () => {
    res.writeHead(200, { "content-type": "video/mp4" });
    createReadStream(path.join(SAMPLES, path.basename(parts.at(-1) ?? "")))
      .on("error", () => res.destroy())
      .pipe(res);
  };
  if (parts[0] === "gate") {
    gates.set(parts[1], () => {
      gates.delete(parts[1]);
      send();
    });
  } else send();
}

async function startWorker(): Promise<RunningConsumer> {
  const workerId = `reels-test-${randomUUID().slice(0, 8)}`;
  const ctx = inProcessWorker(
    { config, redis, producer, log: (level, message, fields) => logs.push({ level, message, workerId, ...fields }) },
    workerId,
  );
  return startPublicationConsumer(ctx);
}

const auth = (key = ACME_KEY) => ({ authorization: `Bearer ${key}` });
const params = (id: string) => ({ params: Promise.resolve({ id }) });

async function create(body: Record<string, unknown>, key = ACME_KEY) {
  const response = await routes.reels.POST(
    new Request("http://dispatch.test/api/reels", {
      method: "POST",
      headers: { ...auth(key), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );
  return { status: response.status, location: response.headers.get("location"), body: await response.json() };
}

async function get(id: string, key = ACME_KEY): Promise<{ status: number; body: PublicationView }> {
  const response = await routes.reel.GET(
    new Request(`http://dispatch.test/api/reels/${id}`, { headers: auth(key) }),
    params(id),
  );
  return { status: response.status, body: await response.json() };
}

async function cancel(id: string, key = ACME_KEY) {
  const response = await routes.reel.DELETE(
    new Request(`http://dispatch.test/api/reels/${id}`, { method: "DELETE", headers: auth(key) }),
    params(id),
  );
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
}

async function patch(id: string, body: unknown, key = ACME_KEY) {
  const response = await routes.reel.PATCH(
    new Request(`http://dispatch.test/api/reels/${id}`, {
      method: "PATCH",
      headers: { ...auth(key), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    params(id),
  );
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
}

async function settled(id: string, timeoutMs = 60_000): Promise<PublicationView> {
  return waitFor(
    async () => {
      const { body } = await get(id);
      return ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(body.status) ? body : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `publication ${id} to settle` },
  );
}

async function sandboxMedia(accountId: string): Promise<{ id: string; caption: string }[]> {
  const response = await fetch(
    `${origin(graphServer)}/graph/v21.0/${accountId}/media?fields=id,caption&access_token=${token(accountId)}`,
  );
  return ((await response.json()) as { data: { id: string; caption: string }[] }).data;
}

const publishCalls = (accountId: string) =>
  graphCalls.filter((c) => c === `POST /graph/${config.GRAPH_VERSION}/${accountId}/media_publish`).length;
const createCalls = (accountId: string) =>
  graphCalls.filter((c) => c === `POST /graph/${config.GRAPH_VERSION}/${accountId}/media`).length;
const sample = (name: string) => `${filesOrigin}/${name}`;

describe("publishing a reel through the worker", () => {
  it("publishes the valid sample: 202 at once, then PUBLISHED with a post the sandbox lists", async () => {
    const caption = `valid ${randomUUID()}`;
    const answer = await create({ account_id: account.valid, video_url: sample("reel-valid.mp4"), caption });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ publication_id: answer.body.publication_id, status: "QUEUED" });
    expect(answer.location).toBe(`/api/reels/${answer.body.publication_id}`);

    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("PUBLISHED");
    expect(p.error).toBeNull();
    expect(p.container_id).toMatch(/^\d+$/);
    expect(p.last_status_code).toBe("FINISHED");
    expect(p.polls.length).toBeGreaterThan(1);
    expect(p.polls.at(-1)?.status_code).toBe("FINISHED");
    expect(p.polls.map((x) => x.attempt)).toEqual(p.polls.map((_, i) => i + 1));
    expect(p.steps.map((s) => s.step)).toEqual(["queued", "creating", "created", "publishing", "published"]);
    expect(p.permalink).toMatch(/\/graph\/reel\//);
    expect((await sandboxMedia(account.valid)).filter((m) => m.caption === caption).map((m) => m.id)).toEqual([
      p.post_id,
    ]);
    expect(publishCalls(account.valid)).toBe(1);
  });

  it("fails the too-short sample with 2207026 and never calls publish", async () => {
    const answer = await create({ account_id: account.short, video_url: sample("reel-too-short.mp4") });
    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("FAILED");
    expect(p.last_status_code).toBe("ERROR");
    expect(p.error).toMatchObject({ code: 352, subcode: 2207026, classification: "fix-input" });
    expect(p.error?.message).toMatch(/unsupported video format/);
    // In plain words, from what the sandbox's probe found; then what to do.
    expect(p.error?.headline).toMatch(/^The video is [\d.]+ s long; reels must be 3 s to 15 min\.$/);
    expect(p.error?.remedy).toBe("The video does not meet the reel specification; fix the video.");
    expect(publishCalls(account.short)).toBe(0);
  });

  it("fails an unreachable video URL with 2207052", async () => {
    const answer = await create({ account_id: account.unreachable, video_url: closedPortUrl });
    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("FAILED");
    expect(p.error).toMatchObject({
      code: 9004,
      subcode: 2207052,
      classification: "fix-input",
      headline: "Instagram could not fetch the video from its URL.",
    });
    expect(p.error?.remedy).toMatch(/public/);
    expect(publishCalls(account.unreachable)).toBe(0);
  });

  it("still publishes exactly once when the worker is stopped in the middle and a fresh one takes over", async () => {
    const caption = `crash ${randomUUID()}`;
    const answer = await create({ account_id: account.crash, video_url: sample("reel-valid.mp4"), caption });
    const id = answer.body.publication_id;
    const during = await waitFor(
      async () => {
        const { body } = await get(id);
        return body.status === "PROCESSING" && body.polls.length >= 2 ? body : undefined;
      },
      { timeoutMs: 30_000, what: "polling to start" },
    );
    await consumers.shift()!.stop(0); // no grace: the run is abandoned, its offset uncommitted
    const pollsAtStop = (await get(id)).body.polls.length;
    await new Promise((r) => setTimeout(r, 200));
    expect((await get(id)).body.polls.length).toBe(pollsAtStop); // nobody is polling now

    consumers.push(await startWorker());
    const p = await settled(id);
    expect(p.status).toBe("PUBLISHED");
    expect(p.container_id).toBe(during.container_id);
    expect(createCalls(account.crash)).toBe(1);
    expect(publishCalls(account.crash)).toBe(1);
    expect(p.steps.map((s) => s.step)).toContain("picked_up");
    expect((await sandboxMedia(account.crash)).filter((m) => m.caption === caption)).toHaveLength(1);
  });

  it("watches a container still processing after the first round of polls, and publishes it by itself once it settles", async () => {
    // The video host holds the download until the test opens the gate: processing outlasts the first round of polls.
    const answer = await create({
      account_id: account.timeout,
      video_url: `${filesOrigin}/gate/timeout/reel-valid.mp4`,
    });
    const id = answer.body.publication_id;
    const watching = await waitFor(
      async () => {
        const { body } = await get(id);
        return body.steps.some((s) => s.step === "watching") ? body : undefined;
      },
      { timeoutMs: 60_000, what: "the first round of polls to end" },
    );
    expect(watching.status).toBe("PROCESSING");
    expect(watching.polls.slice(0, POLL_ATTEMPTS).every((x) => x.status_code === "IN_PROGRESS")).toBe(true);
    expect(publishCalls(account.timeout)).toBe(0);
    // Not TIMED_OUT, so nothing to resume: it goes on by itself.
    const resume = await routes.resume.POST(
      new Request(`http://dispatch.test/api/reels/${id}/resume`, { method: "POST", headers: auth() }),
      params(id),
    );
    expect(resume.status).toBe(409);

    gates.get("timeout")!();
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
    const watched = p.polls.slice(POLL_ATTEMPTS - 1).map((x) => Date.parse(x.at));
    for (let i = 1; i < watched.length; i++) expect(watched[i] - watched[i - 1]).toBeGreaterThanOrEqual(WATCH_MS);
    expect(publishCalls(account.timeout)).toBe(1);
  });

  it("a publication polling for long does not hold back another account's partition", async () => {
    const slow = await create({ account_id: account.slow, video_url: `${filesOrigin}/gate/slow/reel-valid.mp4` });
    await waitFor(async () => (await get(slow.body.publication_id)).body.polls.length >= 1, {
      what: "the slow publication to poll",
    });
    const neighbour = await create({ account_id: account.neighbour, video_url: sample("reel-valid.mp4") });
    const done = await settled(neighbour.body.publication_id);
    expect(done.status).toBe("PUBLISHED");
    gates.get("slow")?.();
    const slowDone = await settled(slow.body.publication_id);
    // The neighbour was taken up while the slow one was still being polled, not after it settled.
    const neighbourStarted = Date.parse(done.steps.find((s) => s.step === "creating")!.at);
    expect(neighbourStarted).toBeLessThan(Date.parse(slowDone.steps.at(-1)!.at));
    expect(neighbourStarted).toBeLessThan(Date.parse(slowDone.polls.at(-1)!.at));
  });

  it("a publication polling a slow container does not delay another publication of the same account", async () => {
    const slow = await create({
      account_id: account.slow,
      video_url: `${filesOrigin}/gate/same-account/reel-valid.mp4`,
    });
    await waitFor(async () => (await get(slow.body.publication_id)).body.polls.length >= 1, {
      what: "the slow publication to poll",
    });
    const quick = await create({ account_id: account.slow, video_url: sample("reel-valid.mp4") });
    const done = await settled(quick.body.publication_id);
    expect(done.status).toBe("PUBLISHED");
    // The slow one is still polling its container: the quick one did not wait for it.
    expect((await get(slow.body.publication_id)).body.status).toBe("PROCESSING");
    gates.get("same-account")?.();
    expect((await settled(slow.body.publication_id)).status).toBe("PUBLISHED");
  });

  it("publishes a scheduled reel after its publish_at, not before", async () => {
    const publishAt = new Date(Date.now() + 2500).toISOString();
    const answer = await create({
      account_id: account.scheduled,
      video_url: sample("reel-valid.mp4"),
      publish_at: publishAt,
    });
    expect(answer.body.status).toBe("SCHEDULED");
    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("PUBLISHED");
    const due = p.steps.find((s) => s.step === "due")!;
    expect(Date.parse(due.at)).toBeGreaterThanOrEqual(Date.parse(publishAt));
    expect(Date.parse(p.steps.find((s) => s.step === "creating")!.at)).toBeGreaterThanOrEqual(Date.parse(publishAt));
  });

  it("streams every step and poll live, ends at the final state, and replays from Last-Event-ID", async () => {
    const answer = await create({ account_id: account.stream, video_url: sample("reel-valid.mp4") });
    const id = answer.body.publication_id;
    const live = await routes.events.GET(
      new Request(`http://dispatch.test/api/reels/${id}/events`, { headers: auth() }),
      params(id),
    );
    expect(live.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readSse(live);
    const data = events.map((e) => ({ id: Number(e.id), event: e.event, ...JSON.parse(e.data) }));
    expect(data.map((e) => e.id)).toEqual(data.map((_, i) => i + 1));
    expect(data.at(-1)).toMatchObject({ event: "step", status: "PUBLISHED", step: { step: "published" } });
    const p = (await get(id)).body;
    expect(data.filter((e) => e.event === "poll").map((e) => ({ ...e.poll, seq: e.id }))).toEqual(p.polls);
    expect(data.filter((e) => e.event === "step").map((e) => ({ ...e.step, seq: e.id }))).toEqual(p.steps);
    // One sequence across steps and polls, in the order they happened.
    expect([...p.steps, ...p.polls].map((e) => e.seq).sort((a, b) => a - b)).toEqual(data.map((e) => e.id));
    expect(data.find((e) => e.step?.step === "created")?.changes).toEqual({ container_id: p.container_id });

    const replay = await routes.events.GET(
      new Request(`http://dispatch.test/api/reels/${id}/events`, { headers: { ...auth(), "last-event-id": "3" } }),
      params(id),
    );
    expect((await readSse(replay)).map((e) => Number(e.id))).toEqual(data.filter((e) => e.id > 3).map((e) => e.id));
  });
});

describe("Meta's further reel parameters", () => {
  const everyParameter = () => ({
    cover_url: `${filesOrigin}/fixtures/cover.jpg`,
    thumb_offset: 1500,
    audio_name: "Morning run",
    collaborators: ["ana.runs", "bo_b"],
    location_id: "7640348500",
    user_tags: [{ username: "carla", x: 0.5, y: 0.25 }, { username: "dan" }],
    trial_params: { graduation_strategy: "SS_PERFORMANCE" },
  });

  it("publishes a reel with every parameter: kept on the publication, sent on the create call, kept on the sandbox's media", async () => {
    const parameters = everyParameter();
    const answer = await create({
      account_id: account.params,
      video_url: sample("reel-valid.mp4"),
      share_to_feed: false,
      ...parameters,
    });
    expect(answer.status).toBe(202);
    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("PUBLISHED");
    expect(p).toMatchObject({ ...parameters, share_to_feed: false });
    // Graph's form: strings, with the lists and trial_params JSON-encoded.
    const graphForm = {
      cover_url: parameters.cover_url,
      thumb_offset: "1500",
      audio_name: "Morning run",
      collaborators: JSON.stringify(parameters.collaborators),
      location_id: "7640348500",
      user_tags: JSON.stringify(parameters.user_tags),
      trial_params: JSON.stringify(parameters.trial_params),
    };
    expect(await redis.hgetall(`sandbox:container:${p.container_id}`)).toMatchObject({
      ...graphForm,
      share_to_feed: "false",
    });
    expect(await redis.hgetall(`sandbox:media:${p.post_id}`)).toMatchObject(graphForm);
    expect(createCalls(account.params)).toBe(1);
    expect(publishCalls(account.params)).toBe(1);
  });

  it("fails a reel whose cover frame is past the video's end with Graph's 1/2207057, as input to fix, and never publishes it", async () => {
    const answer = await create({
      account_id: account.offset,
      video_url: sample("reel-valid.mp4"),
      thumb_offset: 600_000,
    });
    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("FAILED");
    expect(p.error).toMatchObject({ subcode: 2207057, classification: "fix-input" });
    expect(p.error?.headline).toMatch(/thumb_offset/);
    expect(publishCalls(account.offset)).toBe(0);
  });

  it("refuses what Graph would refuse with 422, naming each parameter, and records nothing", async () => {
    const before = await redis.zcard(publicationKeys.tenantIndex("acme"));
    const answer = await create({
      account_id: account.params,
      video_url: sample("reel-valid.mp4"),
      collaborators: ["a", "b", "c", "d"],
      thumb_offset: -1,
      trial_params: { graduation_strategy: "LATER" },
      user_tags: [{ username: "ana", x: 2, y: 0 }],
      cover_url: "ftp://example.com/c.jpg",
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      "collaborators",
      "cover_url",
      "thumb_offset",
      "trial_params.graduation_strategy",
      "user_tags.0.x",
    ]);
    expect(await redis.zcard(publicationKeys.tenantIndex("acme"))).toBe(before);
  });
});

describe("the reels API", () => {
  it("refuses bad bodies with 422 and names the fields", async () => {
    const answer = await create({
      account_id: account.valid,
      video_url: "ftp://x/y.mp4",
      caption: "x".repeat(2201),
      publish_at: "2020-01-01T00:00:00Z",
      extra: true,
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["caption", "extra", "video_url"]);
    const past = await create({
      account_id: account.valid,
      video_url: sample("reel-valid.mp4"),
      publish_at: "2020-01-01T00:00:00Z",
    });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual([{ path: "publish_at", message: "must be in the future" }]);
  });

  it("answers 404 for another tenant's account and another tenant's publication, 401 without a key", async () => {
    expect((await create({ account_id: account.globex, video_url: sample("reel-valid.mp4") })).status).toBe(404);
    const mine = await create({ account_id: account.globex, video_url: sample("reel-too-short.mp4") }, GLOBEX_KEY);
    expect(mine.status).toBe(202);
    expect((await get(mine.body.publication_id)).status).toBe(404);
    expect((await get(mine.body.publication_id, GLOBEX_KEY)).status).toBe(200);
    expect((await get("not-a-uuid")).status).toBe(404);
    const anonymous = await routes.reels.GET(new Request("http://dispatch.test/api/reels"), undefined);
    expect(anonymous.status).toBe(401);
  });

  it("lists the tenant's publications newest first, cursor-paged", async () => {
    const first = await routes.reels.GET(
      new Request("http://dispatch.test/api/reels?limit=2", { headers: auth() }),
      undefined,
    );
    const page1 = await first.json();
    expect(page1.data).toHaveLength(2);
    expect(page1.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/); // opaque: (created_at, id), base64url
    expect(page1.data.every((p: PublicationView) => p.tenant_id === "acme")).toBe(true);
    const second = await routes.reels.GET(
      new Request(`http://dispatch.test/api/reels?limit=100&cursor=${page1.next_cursor}`, { headers: auth() }),
      undefined,
    );
    const page2 = await second.json();
    const all = [...page1.data, ...page2.data] as PublicationView[];
    expect(new Set(all.map((p) => p.publication_id)).size).toBe(all.length);
    const created = all.map((p) => Date.parse(p.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it("cancels a scheduled publication: 200 CANCELLED, out of the scheduler's index, never sent to Graph; cancelling again is a 409", async () => {
    const answer = await create({
      account_id: account.cancel,
      video_url: sample("reel-valid.mp4"),
      publish_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    const id = answer.body.publication_id;
    await waitFor(async () => (await redis.zscore(publicationKeys.scheduled, id)) !== null, {
      what: "the publication to be scheduled",
    });

    expect((await cancel(id, GLOBEX_KEY)).status).toBe(404);
    const cancelled = await cancel(id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ publication_id: id, status: "CANCELLED" });
    expect((cancelled.body as PublicationView).steps.map((s) => [s.step, s.seq])).toEqual([
      ["scheduled", 1],
      ["cancelled", 2],
    ]);
    expect((await get(id)).body.status).toBe("CANCELLED");
    expect(await redis.zscore(publicationKeys.scheduled, id)).toBeNull();

    const again = await cancel(id);
    expect([again.status, again.type, again.body.detail]).toEqual([
      409,
      "application/problem+json",
      "The publication is already cancelled.",
    ]);
    expect(createCalls(account.cancel)).toBe(0);
  });

  it("changes a scheduled publication's time and caption with PATCH; it goes out at the new time with the new caption, and cannot be changed or cancelled after", async () => {
    const answer = await create({
      account_id: account.edit,
      video_url: sample("reel-valid.mp4"),
      caption: "old caption",
      publish_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    const id = answer.body.publication_id;

    const refused = await patch(id, { caption: "x".repeat(2201), publish_at: "2020-01-01T00:00:00Z", extra: 1 });
    expect([refused.status, refused.type]).toEqual([422, "application/problem+json"]);
    expect(refused.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["caption", "extra"]);
    expect((await patch(id, { publish_at: "2020-01-01T00:00:00Z" })).body.errors).toEqual([
      { path: "publish_at", message: "must be in the future" },
    ]);
    expect((await patch(id, {})).status).toBe(422);
    expect((await patch(id, { caption: "x" }, GLOBEX_KEY)).status).toBe(404);

    const caption = `new caption ${randomUUID()}`;
    const publishAt = new Date(Date.now() + 2500).toISOString();
    const changed = await patch(id, { publish_at: publishAt, caption });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ publication_id: id, status: "SCHEDULED", publish_at: publishAt, caption });
    expect((changed.body as PublicationView).steps.map((s) => s.step)).toEqual(["scheduled", "updated"]);
    expect(await redis.zscore(publicationKeys.scheduled, id)).toBe(String(Date.parse(publishAt)));

    const p = await settled(id);
    expect(p.status).toBe("PUBLISHED");
    expect(Date.parse(p.steps.find((s) => s.step === "due")!.at)).toBeGreaterThanOrEqual(Date.parse(publishAt));
    expect((await sandboxMedia(account.edit)).map((m) => m.caption)).toEqual([caption]);

    const late = await patch(id, { caption: "too late" });
    expect([late.status, late.body.detail]).toEqual([
      409,
      "Only a SCHEDULED publication can be changed; this one is PUBLISHED.",
    ]);
    expect((await cancel(id)).status).toBe(409);
  });

  it("lists the tenant's accounts without their tokens", async () => {
    const response = await routes.accounts.GET(
      new Request("http://dispatch.test/api/accounts", { headers: auth() }),
      undefined,
    );
    const text = await response.text();
    expect(text).not.toContain("secret");
    const body = JSON.parse(text) as { data: { account_id: string; username: string | null; sandbox: boolean }[] };
    // Accounts live in Redis now: other test files' accounts of a tenant "acme" may be listed too.
    const ours = ACCOUNTS.filter((n) => n !== "globex").map((n) => account[n]);
    const listed = body.data.filter((a) => ours.includes(a.account_id));
    expect(listed.map((a) => a.account_id).sort()).toEqual([...ours].sort());
    expect(body.data.map((a) => a.account_id)).not.toContain(account.globex);
    // Read from Graph (here the sandbox, answering like Meta) with each account's own token.
    expect(listed.map((a) => a.username)).toEqual(listed.map(() => usernameOf({ tenantId: "acme" })));
    expect(graphCalls).toContain(`GET /graph/${config.GRAPH_VERSION}/${account.valid}`);
    expect(body.data.every((a) => a.sandbox === false)).toBe(true); // GRAPH_URL is this test's own server, not the app's sandbox
  });
});
