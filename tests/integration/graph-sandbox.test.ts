import { randomInt } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, readFile, rm, stat, utimes } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig } from "@/lib/config";
import type { Log } from "@/lib/log";
import { startTestDns } from "../dns-server";
import { waitFor } from "../helpers";
import { createRedis, type Redis } from "@/lib/redis";
import { resolverLookup } from "@/lib/net/public-agent";
import { keys as sandboxKeys, readContainerRecord, readMediaRecord } from "@/lib/graph/sandbox/store";
import {
  handleGraphRequest,
  resumeSandboxProcessing,
  settleSandboxProcessing,
  sweepVideoFiles,
  type SandboxDeps,
  type SandboxLimits,
} from "@/lib/graph/sandbox";
import { moovWithoutMvhd } from "../mp4-boxes";
import { issueToken } from "@/lib/graph/sandbox/sandbox-tokens";

/**
 * The Graph sandbox called with real Requests, against the real Redis, fetching the committed
 * sample videos from a real HTTP server on 127.0.0.1. Each sandbox() gets accounts of its own.
 */

const SAMPLES = path.resolve(__dirname, "../../public/samples");
const FIXTURES = path.resolve(__dirname, "../fixtures");
const DATA_DIR = path.resolve(__dirname, "../../.test-data/graph-sandbox");
const DAY = 24 * 60 * 60 * 1000;
const UNREACHABLE_STATUS =
  "Error: Media upload has failed with error code 2207052 (the video could not be downloaded: the host could not be reached, or it is not a public address)";

let redis: Redis;
let files: Server;
let filesOrigin: string;
let closedPortUrl: string;
const requested: string[] = [];
const gates = new Map<string, () => void>();
const everyDeps: SandboxDeps[] = [];
const logs: unknown[] = [];

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  files = await startFileServer();
  filesOrigin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  closedPortUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/samples/reel-valid.mp4`;
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(async () => {
  for (const release of gates.values()) release();
  await Promise.all(everyDeps.map((deps) => settleSandboxProcessing(deps)));
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
  await redis.quit();
  // Tokens never reach the logs.
  expect(JSON.stringify(logs)).not.toMatch(/token-[0-9]/);
});

/** Serves the samples, plus the misbehaving hosts the sandbox must survive. */
function startFileServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    requested.push(url.pathname);
    const sample = (name: string) => {
      res.writeHead(200, { "content-type": name.endsWith(".webm") ? "video/webm" : "video/mp4" });
      createReadStream(path.join(SAMPLES, path.basename(name)))
        .on("error", () => res.destroy())
        .pipe(res);
    };
    const [, kind = "", arg = ""] = url.pathname.split("/");
    if (kind === "samples") return sample(arg);
    if (kind === "fixtures") {
      res.writeHead(200, { "content-type": "image/jpeg" });
      return createReadStream(path.join(FIXTURES, path.basename(arg)))
        .on("error", () => res.destroy())
        .pipe(res);
    }
    // A JPEG's first bytes, then more than the 8 MB a cover may have.
    if (kind === "big-jpeg")
      return res
        .writeHead(200, { "content-type": "image/jpeg" })
        .end(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(8 * 1024 * 1024)]));
    if (kind === "padded") {
      // A valid reel followed by 8 MiB of zeros, which no player reads.
      res.writeHead(200, { "content-type": "video/mp4" });
      return createReadStream(path.join(SAMPLES, path.basename(arg)))
        .on("end", () => res.end(Buffer.alloc(8 * 1024 * 1024)))
        .on("error", () => res.destroy())
        .pipe(res, { end: false });
    }
    if (kind === "status") return res.writeHead(Number(arg)).end("nope");
    if (kind === "moov-without-mvhd") return res.writeHead(200, { "content-type": "video/mp4" }).end(moovWithoutMvhd);
    if (kind === "html") return res.writeHead(200, { "content-type": "text/html" }).end("<html>log in first</html>");
    if (kind === "redirect-chain") {
      const left = Number(arg);
      if (left === 0) return sample("reel-valid.mp4");
      return res.writeHead(302, { location: `/redirect-chain/${left - 1}` }).end();
    }
    if (kind === "redirect-to") return res.writeHead(302, { location: url.searchParams.get("url") ?? "/" }).end();
    if (kind === "gate") {
      gates.set(arg, () => {
        gates.delete(arg);
        sample("reel-valid.mp4");
      });
      return;
    }
    if (kind === "hang") return; // never answers
    res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

interface GraphAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: Record<string, unknown>; data?: Record<string, unknown>[] };
}

function sandbox(
  env: Record<string, string> = {},
  extra: Partial<SandboxDeps> & { limits?: Partial<SandboxLimits> } = {},
) {
  const acme = `1784${randomInt(1e9, 1e10)}`;
  const globex = `1784${randomInt(1e9, 1e10)}`;
  const tokens = { acme: `acme-token-${acme}`, globex: `globex-token-${globex}` };
  const config = parseConfig({
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: "127.0.0.1:1",
    API_KEYS: "acme:acme-key-0123456789abcdef,globex:globex-key-0123456789abcdef",
    REEL_ACCOUNTS: `acme:${acme}:${tokens.acme},globex:${globex}:${tokens.globex}`,
    SANDBOX_PROCESSING_MS: "50",
    ALLOW_PRIVATE_URLS: "true",
    DATA_DIR,
    ...env,
  });
  const clock: { offset: number; fixed?: number } = { offset: 0 };
  const log: Log = (level, message, fields) => logs.push({ level, message, ...fields });
  const deps: SandboxDeps = { redis, config, log, now: () => clock.fixed ?? Date.now() + clock.offset, ...extra };
  everyDeps.push(deps);

  async function graph(
    method: "GET" | "POST" | "HEAD",
    pathAndQuery: string,
    params: Record<string, string> = {},
    token: string | null = tokens.acme,
  ): Promise<GraphAnswer> {
    const url = new URL(`http://sandbox.test/graph/${pathAndQuery}`);
    const all = { ...params, ...(token === null ? {} : { access_token: token }) };
    if (method !== "POST") for (const [k, v] of Object.entries(all)) url.searchParams.set(k, v);
    const init: RequestInit =
      method === "POST"
        ? { method, body: new URLSearchParams(all), headers: { "content-type": "application/x-www-form-urlencoded" } }
        : { method };
    const response = await handleGraphRequest(new Request(url, init), deps);
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
  }

  async function create(
    videoUrl: string,
    params: Record<string, string> = {},
    account = acme,
    token = tokens.acme,
  ): Promise<string> {
    const answer = await graph(
      "POST",
      `v21.0/${account}/media`,
      { media_type: "REELS", video_url: videoUrl, ...params },
      token,
    );
    expect(answer.body, JSON.stringify(answer.body)).toEqual({ id: expect.stringMatching(/^\d{17}$/) });
    return answer.body.id as string;
  }

  async function statusOf(
    containerId: string,
    d: SandboxDeps = deps,
  ): Promise<{ status_code: string; status: string }> {
    const url = `http://sandbox.test/graph/v21.0/${containerId}?fields=status_code,status&access_token=${tokens.acme}`;
    return (await handleGraphRequest(new Request(url), d)).json();
  }

  /** Polls until the container leaves IN_PROGRESS (no fixed sleeps). */
  async function settled(containerId: string, d: SandboxDeps = deps): Promise<{ status_code: string; status: string }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const status = await statusOf(containerId, d);
      if (status.status_code !== "IN_PROGRESS") return status;
      if (Date.now() > deadline) throw new Error(`container ${containerId} still IN_PROGRESS`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function publish(containerId: string, account = acme, token = tokens.acme): Promise<GraphAnswer> {
    return graph("POST", `v21.0/${account}/media_publish?creation_id=${containerId}`, {}, token);
  }

  /** The control surface, called from this machine (the peer the web server's request guard stamps). */
  async function control(
    method: "POST" | "PUT",
    pathname: string,
    body: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const request = new Request(`http://sandbox.test/graph/_sandbox/${pathname}`, {
      method,
      headers: { "content-type": "application/json", "x-dispatch-peer": "127.0.0.1" },
      body: JSON.stringify(body),
    });
    const response = await handleGraphRequest(request, deps);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  return { deps, acme, globex, tokens, clock, graph, create, statusOf, settled, publish, control };
}

const sampleUrl = (name: string) => `${filesOrigin}/samples/${name}`;

/** Meta's error object, with HTTP 400 for every code but its own unknown failures (1); 100/33 is a GraphMethodException. */
function expectGraphError(answer: GraphAnswer, code: number, subcode?: number) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(code === 1 ? 500 : 400);
  expect(answer.body.error).toMatchObject({
    code,
    type: code === 100 && subcode === 33 ? "GraphMethodException" : "OAuthException",
    message: expect.any(String),
    is_transient: expect.any(Boolean),
    fbtrace_id: expect.stringMatching(/^[A-Za-z0-9_-]{10,}$/),
    ...(subcode === undefined ? {} : { error_subcode: subcode }),
  });
  expect(answer.headers.get("x-fb-trace-id")).toBe(answer.body.error?.fbtrace_id);
}

describe("the happy path", () => {
  it("creates, processes, publishes, lists and serves a reel", async () => {
    // Processing long enough that the first read finds it IN_PROGRESS even on a busy machine.
    const s = sandbox({ SANDBOX_PROCESSING_MS: "2000" });
    const id = await s.create(sampleUrl("reel-valid.mp4"), {
      caption: "First reel #sandbox @friend",
      share_to_feed: "false",
    });
    expect(await s.statusOf(id)).toEqual({
      id,
      status_code: "IN_PROGRESS",
      status: expect.stringMatching(/^In Progress/),
    });
    expect(await s.settled(id)).toEqual({ id, status_code: "FINISHED", status: expect.stringMatching(/^Finished/) });

    const published = await s.publish(id);
    expect(published.status).toBe(200);
    expect(published.body).toEqual({ id: expect.stringMatching(/^\d{17}$/) });
    const mediaId = published.body.id as string;
    expect(await s.statusOf(id)).toMatchObject({ status_code: "PUBLISHED" });

    const fields = "id,media_type,media_product_type,caption,permalink,timestamp,media_url,shortcode,is_shared_to_feed";
    const list = await s.graph("GET", `v21.0/${s.acme}/media`, { fields });
    expect(list.body.data).toEqual([
      {
        id: mediaId,
        media_type: "VIDEO",
        media_product_type: "REELS",
        caption: "First reel #sandbox @friend",
        permalink: expect.stringMatching(/^http:\/\/sandbox\.test\/graph\/reel\/[A-Za-z0-9_-]{11}$/),
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/),
        media_url: `http://sandbox.test/graph/media-files/${mediaId}.mp4`,
        shortcode: expect.any(String),
        is_shared_to_feed: false,
      },
    ]);
    const node = await s.graph("GET", `v21.0/${mediaId}`, { fields });
    expect(node.body).toEqual(list.body.data?.[0]);

    const limit = await s.graph("GET", `v21.0/${s.acme}/content_publishing_limit`, { fields: "quota_usage,config" });
    expect(limit.body).toEqual({ data: [{ quota_usage: 1, config: { quota_total: 100, quota_duration: 86400 } }] });

    // The kept video plays: whole, by range, by suffix range, and an impossible range.
    const original = await readFile(path.join(SAMPLES, "reel-valid.mp4"));
    const mediaUrl = list.body.data?.[0]?.media_url as string;
    const whole = await handleGraphRequest(new Request(mediaUrl), s.deps);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("video/mp4");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(Buffer.from(await whole.arrayBuffer()).equals(original)).toBe(true);

    const part = await handleGraphRequest(new Request(mediaUrl, { headers: { range: "bytes=100-1099" } }), s.deps);
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-1099/${original.length}`);
    expect(part.headers.get("content-length")).toBe("1000");
    expect(Buffer.from(await part.arrayBuffer()).equals(original.subarray(100, 1100))).toBe(true);

    const tail = await handleGraphRequest(new Request(mediaUrl, { headers: { range: "bytes=-10" } }), s.deps);
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(original.subarray(original.length - 10))).toBe(true);

    const beyond = await handleGraphRequest(
      new Request(mediaUrl, { headers: { range: `bytes=${original.length}-` } }),
      s.deps,
    );
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("content-range")).toBe(`bytes */${original.length}`);

    const head = await handleGraphRequest(new Request(mediaUrl, { method: "HEAD" }), s.deps);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(original.length));

    const page = await handleGraphRequest(new Request(list.body.data?.[0]?.permalink as string), s.deps);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`src="${mediaUrl}"`);

    const missing = await handleGraphRequest(
      new Request("http://sandbox.test/graph/media-files/17800000000000000.mp4"),
      s.deps,
    );
    expect(missing.status).toBe(404);

    // Publishing the same container again is refused; the container stays PUBLISHED.
    expectGraphError(await s.publish(id), 9007, 2207027);
  });

  it("accepts the token in an Authorization header and a JSON body, as Graph does", async () => {
    const s = sandbox();
    const response = await handleGraphRequest(
      new Request(`http://sandbox.test/graph/v21.0/${s.acme}/media`, {
        method: "POST",
        headers: { authorization: `OAuth ${s.tokens.acme}`, "content-type": "application/json" },
        body: JSON.stringify({ media_type: "REELS", video_url: sampleUrl("reel-valid.mp4"), share_to_feed: true }),
      }),
      s.deps,
    );
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };
    expect((await s.settled(id)).status_code).toBe("FINISHED");
  });
});

describe("processing errors", () => {
  it("refuses a video under 3 s with 2207026", async () => {
    const s = sandbox();
    const status = await s.settled(await s.create(sampleUrl("reel-too-short.mp4")));
    expect(status.status_code).toBe("ERROR");
    expect(status.status).toBe(
      "Error: Media upload has failed with error code 2207026 (unsupported video format: the video is 1.5 s long; reels must be 3 s to 15 min)",
    );
  });

  it("refuses MPEG-4 Part 2 video and a file that is not MP4 at all with 2207026", async () => {
    const s = sandbox();
    const codec = await s.settled(await s.create(sampleUrl("reel-unsupported.mp4")));
    expect(codec).toMatchObject({
      status_code: "ERROR",
      status: expect.stringMatching(
        /^Error: Media upload has failed with error code 2207026 \(.*video codec is mp4v.*\)$/,
      ),
    });
    const notVideo = await s.settled(await s.create(sampleUrl("README.md")));
    expect(notVideo).toMatchObject({
      status_code: "ERROR",
      status:
        "Error: Media upload has failed with error code 2207026 (unsupported video format: not an MP4 or MOV file)",
    });
  });

  it("refuses a malformed MP4 (a moov without mvhd) with 352/2207026, not the -1/2207001 a worker retries", async () => {
    const s = sandbox();
    const status = await s.settled(await s.create(`${filesOrigin}/moov-without-mvhd`));
    expect(status).toMatchObject({
      status_code: "ERROR",
      status:
        "Error: Media upload has failed with error code 2207026 (unsupported video format: the MP4/MOV structure is invalid: a required box is missing or malformed)",
    });
  });

  it.each([
    ["a closed port", () => closedPortUrl, /the host could not be reached, or it is not a public address/],
    ["a 404", () => `${filesOrigin}/status/404`, /answered HTTP 404/],
    ["a 403", () => `${filesOrigin}/status/403`, /answered HTTP 403/],
    ["an HTML login wall", () => `${filesOrigin}/html`, /HTML page, not a video/],
    ["six redirects", () => `${filesOrigin}/redirect-chain/6`, /more than 5 redirects/],
  ])("gives 2207052 for %s", async (_name, url, reason) => {
    const s = sandbox();
    const status = await s.settled(await s.create(url()));
    expect(status.status_code).toBe("ERROR");
    expect(status.status).toMatch(
      /^Error: Media upload has failed with error code 2207052 \(the video could not be downloaded: .*\)$/,
    );
    expect(status.status).not.toMatch(/ECONN|127\.0\.0\.1|localhost/);
    expect(status.status).toMatch(reason);
  });

  it("follows five redirects", async () => {
    const s = sandbox();
    expect((await s.settled(await s.create(`${filesOrigin}/redirect-chain/5`))).status_code).toBe("FINISHED");
  });

  it("gives 2207052 for a video over the size cap, and 2207003 when the download times out", async () => {
    const small = sandbox({}, { limits: { maxVideoBytes: 10_000 } });
    expect((await small.settled(await small.create(sampleUrl("reel-valid.mp4")))).status).toMatch(
      /^Error: Media upload has failed with error code 2207052 \(.*over the 10 KB limit\)$/,
    );
    const slow = sandbox({}, { limits: { fetchTimeoutMs: 300 } });
    expect((await slow.settled(await slow.create(`${filesOrigin}/hang/forever`))).status).toMatch(
      /^Error: Media upload has failed with error code 2207003 \(timed out downloading the media: .*\)$/,
    );
  });
});

describe("the fetcher, with ALLOW_PRIVATE_URLS off", () => {
  /** With `port` the file server's, the file server is this server's own origin. */
  async function strictSandbox(records: Record<string, string[]>, port = String(new URL(filesOrigin).port)) {
    const dns = await startTestDns(records);
    const s = sandbox({ ALLOW_PRIVATE_URLS: "false", PORT: port }, { lookup: resolverLookup(dns.resolver) });
    return { s, dns, filesPort: String(new URL(filesOrigin).port) };
  }

  it("fetches this server's own samples by any name of this machine, and nothing else private", async () => {
    const { s, dns, filesPort } = await strictSandbox({
      "my-machine.test": ["127.0.0.1"],
      "internal.test": ["10.0.0.7"],
    });
    try {
      expect((await s.settled(await s.create(sampleUrl("reel-valid.mp4")))).status_code).toBe("FINISHED");
      expect(
        (await s.settled(await s.create(`http://my-machine.test:${filesPort}/samples/reel-valid.mp4`))).status_code,
      ).toBe("FINISHED");

      const before = requested.length;
      for (const url of [
        "http://internal.test/video.mp4",
        `http://localhost:${Number(filesPort) + 1}/video.mp4`,
        "http://169.254.169.254/latest/meta-data",
        closedPortUrl,
        `${filesOrigin}/redirect-to?url=${encodeURIComponent(closedPortUrl)}`,
        "http://unknown-name.test/video.mp4",
      ]) {
        const status = await s.settled(await s.create(url));
        expect(status, url).toEqual({ id: expect.any(String), status_code: "ERROR", status: UNREACHABLE_STATUS });
      }
      expect(requested.slice(before)).toEqual(["/redirect-to"]); // the own origin's redirect, then nothing
    } finally {
      await dns.close();
    }
  });

  it("refuses another service on this machine at connect time: by address, by a name that resolves to it, and by redirect", async () => {
    const { s, dns, filesPort } = await strictSandbox(
      { "rebind.test": ["127.0.0.1"], "mapped.test": ["::ffff:127.0.0.1"], "sixtofour.test": ["2002:7f00:1::"] },
      "1",
    );
    try {
      const before = requested.length;
      for (const url of [
        sampleUrl("reel-valid.mp4"),
        `http://rebind.test:${filesPort}/samples/reel-valid.mp4`,
        `http://mapped.test:${filesPort}/samples/reel-valid.mp4`,
        `http://sixtofour.test:${filesPort}/samples/reel-valid.mp4`,
        `http://[::ffff:127.0.0.1]:${filesPort}/samples/reel-valid.mp4`,
      ]) {
        const status = await s.settled(await s.create(url));
        expect(status, url).toEqual({ id: expect.any(String), status_code: "ERROR", status: UNREACHABLE_STATUS });
      }
      expect(requested.length).toBe(before); // the file server never saw a request
      expect(dns.questions.some((q) => q.startsWith("rebind.test"))).toBe(true);
    } finally {
      await dns.close();
    }
  });

  it("says the same about a closed port, a refused address and a name that does not resolve", async () => {
    const { s, dns } = await strictSandbox({ "internal.test": ["10.0.0.7"] });
    try {
      const statuses = new Set<string>();
      for (const url of [closedPortUrl, "http://internal.test/", "http://nowhere.test/"])
        statuses.add((await s.settled(await s.create(url))).status);
      expect([...statuses]).toEqual([UNREACHABLE_STATUS]);
      expect(UNREACHABLE_STATUS).not.toMatch(/ECONN|socket|\d+\.\d+\.\d+|internal/i);
    } finally {
      await dns.close();
    }
  });
});

describe("a bounded store", () => {
  const keptFiles = async (accountId: string, dataDir = DATA_DIR) => {
    const dir = path.join(dataDir, "sandbox", "videos", accountId);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => /\.(mp4|mov)$/.test(n));
    return Promise.all(
      names.map(async (name) => ({ path: path.join(dir, name), size: (await stat(path.join(dir, name))).size })),
    );
  };

  it("keeps only the movie of a video followed by garbage", async () => {
    const s = sandbox();
    const original = await readFile(path.join(SAMPLES, "reel-valid.mp4"));
    const id = await s.create(`${filesOrigin}/padded/reel-valid.mp4`);
    expect((await s.settled(id)).status_code).toBe("FINISHED");
    const mediaId = (await s.publish(id)).body.id as string;
    expect((await keptFiles(s.acme)).map((f) => f.size)).toEqual([original.byteLength]);
    const served = await handleGraphRequest(
      new Request(`http://sandbox.test/graph/media-files/${mediaId}.mp4`),
      s.deps,
    );
    expect(Buffer.from(await served.arrayBuffer()).equals(original)).toBe(true);
  });

  it("expires a published reel, its records and then its file", async () => {
    const s = sandbox({}, { limits: { mediaTtlMs: 1500 } });
    const id = await s.create(sampleUrl("reel-valid.mp4"));
    await s.settled(id);
    const mediaId = (await s.publish(id)).body.id as string;
    expect((await s.graph("GET", `v21.0/${mediaId}`)).status).toBe(200);
    const ttl = await redis.pttl(sandboxKeys.media(mediaId));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1500);

    await waitFor(async () => (await s.graph("GET", `v21.0/${mediaId}`)).status === 400, {
      timeoutMs: 10_000,
      what: "the media to expire",
    });
    expect((await s.graph("GET", `v21.0/${id}`)).status).toBe(400); // the container went with it
    expect((await s.graph("GET", `v21.0/${s.acme}/media`)).body.data).toEqual([]);
    expect(
      (await handleGraphRequest(new Request(`http://sandbox.test/graph/media-files/${mediaId}.mp4`), s.deps)).status,
    ).toBe(404);

    const [file] = await keptFiles(s.acme);
    expect(file).toBeDefined();
    const anHourAgo = new Date(Date.now() - 60 * 60 * 1000);
    await utimes(file!.path, anHourAgo, anHourAgo); // past the grace a just-kept file gets
    await sweepVideoFiles(s.deps);
    expect(await keptFiles(s.acme)).toEqual([]);
  });

  it("refuses a video past the account's bytes, and past the store's", async () => {
    const size = (await stat(path.join(SAMPLES, "reel-valid.mp4"))).size;
    const perAccount = sandbox({}, { limits: { maxAccountBytes: Math.round(size * 1.5) } });
    expect((await perAccount.settled(await perAccount.create(sampleUrl("reel-valid.mp4")))).status_code).toBe(
      "FINISHED",
    );
    expect((await perAccount.settled(await perAccount.create(sampleUrl("reel-valid.mp4")))).status).toMatch(
      /^Error: Media upload has failed with error code 2207053 \(the account's kept videos would exceed the sandbox's \d+ KB per account.*\)$/,
    );
    expect(await keptFiles(perAccount.acme)).toHaveLength(1);

    const storeDir = `${DATA_DIR}-store`;
    await rm(storeDir, { recursive: true, force: true });
    const whole = sandbox({ DATA_DIR: storeDir }, { limits: { maxStoreBytes: Math.round(size * 1.5) } });
    expect((await whole.settled(await whole.create(sampleUrl("reel-valid.mp4")))).status_code).toBe("FINISHED");
    const other = await whole.create(sampleUrl("reel-valid.mp4"), {}, whole.globex, whole.tokens.globex);
    const refused = await waitFor(
      async () => {
        const answer = await whole.graph(
          "GET",
          `v21.0/${other}`,
          { fields: "status_code,status" },
          whole.tokens.globex,
        );
        return answer.body.status_code === "IN_PROGRESS" ? undefined : answer.body;
      },
      { what: "the other account's container to settle" },
    );
    expect(refused.status).toMatch(
      /^Error: Media upload has failed with error code 2207053 \(the sandbox's video store is full.*\)$/,
    );
  });

  it("downloads at most maxConcurrentDownloads videos at once", async () => {
    const s = sandbox({}, { limits: { maxConcurrentDownloads: 2 } });
    const names = ["cap-a", "cap-b", "cap-c"].map((n) => `${n}-${randomInt(1e9)}`);
    const ids = [];
    for (const name of names) ids.push(await s.create(`${filesOrigin}/gate/${name}`));
    const waiting = () => names.filter((n) => gates.has(n));
    await waitFor(() => waiting().length === 2, { what: "two downloads" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(waiting()).toHaveLength(2);
    const first = waiting()[0]!;
    gates.get(first)?.();
    await waitFor(() => waiting().length === 2 && !waiting().includes(first), { what: "the third download" });
    for (const name of names) gates.get(name)?.();
    for (const id of ids) expect((await s.settled(id)).status_code).toBe("FINISHED");
  });
});

describe("tokens", () => {
  it("answers 104 for a call without a token and 190 for an unknown one, before anything else", async () => {
    const s = sandbox();
    const missing = await s.graph(
      "POST",
      `v21.0/${s.acme}/media`,
      { media_type: "REELS", video_url: sampleUrl("reel-valid.mp4") },
      null,
    );
    expectGraphError(missing, 104);
    expect(missing.body.error?.message).toBe("An access token is required to request this resource.");
    for (const token of ["not-a-token", `${s.tokens.acme}x`]) {
      const answer = await s.graph(
        "POST",
        `v21.0/${s.acme}/media`,
        { media_type: "REELS", video_url: sampleUrl("reel-valid.mp4") },
        token,
      );
      expectGraphError(answer, 190);
      expect(answer.headers.get("www-authenticate")).toMatch(/^OAuth "Facebook Platform" "invalid_token"/);
    }
    expectGraphError(await s.graph("GET", "v21.0/12345678901234567", {}, "bad"), 190);
    expectGraphError(await s.graph("GET", "v21.0/12345678901234567", {}, null), 104);
  });

  it("answers 100/33 (GraphMethodException), not 190, for another account's objects: to that token they do not exist", async () => {
    const s = sandbox();
    const id = await s.create(sampleUrl("reel-valid.mp4"));
    const unseen = (method: "get" | "post", objectId: string) =>
      `Unsupported ${method} request. Object with ID '${objectId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`;
    const createThere = await s.graph(
      "POST",
      `v21.0/${s.acme}/media`,
      { media_type: "REELS", video_url: sampleUrl("reel-valid.mp4") },
      s.tokens.globex,
    );
    expectGraphError(createThere, 100, 33);
    expect(createThere.body.error?.message).toContain(unseen("post", s.acme));
    const readThere = await s.graph("GET", `v21.0/${id}`, { fields: "status_code" }, s.tokens.globex);
    expectGraphError(readThere, 100, 33);
    expect(readThere.body.error?.message).toContain(unseen("get", id));
    expectGraphError(await s.graph("GET", `v21.0/${s.acme}`, { fields: "id,username" }, s.tokens.globex), 100, 33);
    expect((await s.settled(id)).status_code).toBe("FINISHED");
    expectGraphError(await s.publish(id, s.acme, s.tokens.globex), 100, 33);
    // Globex may not publish Acme's container through its own account either: it does not exist there.
    expectGraphError(await s.publish(id, s.globex, s.tokens.globex), 24, 2207006);
  });
});

describe("publishing rules", () => {
  it("refuses to publish before FINISHED with 9007/2207027, then publishes once it is", async () => {
    const s = sandbox();
    const gate = `g${randomInt(1e9)}`;
    const id = await s.create(`${filesOrigin}/gate/${gate}`);
    const refused = await s.publish(id);
    expectGraphError(refused, 9007, 2207027);
    expect(refused.body.error).toMatchObject({
      message: "Media ID is not available",
      error_user_title: "Media Not Ready",
    });
    await expect.poll(() => gates.has(gate)).toBe(true);
    gates.get(gate)?.();
    expect((await s.settled(id)).status_code).toBe("FINISHED");
    expect((await s.publish(id)).status).toBe(200);
  });

  it("enforces the publishing quota over a moving 24 h with 9/2207042", async () => {
    const s = sandbox({ SANDBOX_PUBLISH_LIMIT: "1" });
    const first = await s.create(sampleUrl("reel-valid.mp4"));
    await s.settled(first);
    expect((await s.publish(first)).status).toBe(200);

    s.clock.offset = 23 * 60 * 60 * 1000;
    const second = await s.create(sampleUrl("reel-valid.mp4"));
    expect((await s.settled(second)).status_code).toBe("FINISHED");
    expectGraphError(await s.publish(second), 9, 2207042);
    const limit = await s.graph("GET", `v21.0/${s.acme}/content_publishing_limit`, { fields: "quota_usage,config" });
    expect(limit.body).toEqual({ data: [{ quota_usage: 1, config: { quota_total: 1, quota_duration: 86400 } }] });

    s.clock.offset = DAY + 60_000; // the first post left the window; the second container is 1 h old
    expect((await s.publish(second)).status).toBe(200);
  });

  it("caps containers per account per 24 h", async () => {
    const s = sandbox({}, { limits: { containersPer24h: 2 } });
    await s.create(sampleUrl("reel-valid.mp4"));
    await s.create(sampleUrl("reel-valid.mp4"));
    expectGraphError(
      await s.graph("POST", `v21.0/${s.acme}/media`, { media_type: "REELS", video_url: sampleUrl("reel-valid.mp4") }),
      9,
    );
    s.clock.offset = DAY;
    await s.create(sampleUrl("reel-valid.mp4"));
  });

  it("expires an unpublished container 24 h after creation", async () => {
    const s = sandbox();
    const before = Date.now();
    const id = await s.create(sampleUrl("reel-valid.mp4"));
    const after = Date.now();
    expect((await s.settled(id)).status_code).toBe("FINISHED");
    s.clock.fixed = before + DAY - 1;
    expect((await s.statusOf(id)).status_code).toBe("FINISHED");
    s.clock.fixed = after + DAY;
    expect(await s.statusOf(id)).toEqual({ id, status_code: "EXPIRED", status: expect.stringMatching(/^Expired/) });
    expectGraphError(await s.publish(id), -2, 2207020);
  });
});

describe("parameters and paths", () => {
  const tags = Array.from({ length: 31 }, (_, i) => `#tag${i}`).join(" ");
  const mentions = Array.from({ length: 21 }, (_, i) => `@user${i}`).join(" ");
  it.each<[string, Record<string, string>, RegExp]>([
    ["no media_type", { video_url: "https://example.com/v.mp4" }, /media_type is required/],
    [
      "media_type=VIDEO",
      { media_type: "VIDEO", video_url: "https://example.com/v.mp4" },
      /VIDEO media type is no longer supported/,
    ],
    ["media_type=IMAGE", { media_type: "IMAGE", video_url: "https://example.com/v.mp4" }, /must be REELS/],
    ["no video_url", { media_type: "REELS" }, /video_url is required/],
    ["an ftp video_url", { media_type: "REELS", video_url: "ftp://example.com/v.mp4" }, /valid http or https URL/],
    [
      "a video_url with credentials",
      { media_type: "REELS", video_url: "https://u:p@example.com/v.mp4" },
      /user name or password/,
    ],
    [
      "share_to_feed=maybe",
      { media_type: "REELS", video_url: "https://example.com/v.mp4", share_to_feed: "maybe" },
      /share_to_feed must be a boolean/,
    ],
  ])("answers 100 for %s", async (_name, params, message) => {
    const s = sandbox();
    const answer = await s.graph("POST", `v21.0/${s.acme}/media`, params);
    expectGraphError(answer, 100);
    expect(answer.body.error?.message).toMatch(/^\(#100\) /);
    expect(answer.body.error?.message).toMatch(message);
  });

  it("accepts a caption at the limits: 2200 characters, 30 hashtags, 20 mentions", async () => {
    const s = sandbox();
    const tagsAndMentions = `${tags.replace(/ #tag30$/, "")} ${mentions.replace(/ @user20$/, "")}`;
    const caption = `${"y".repeat(2200 - tagsAndMentions.length - 1)} ${tagsAndMentions}`;
    expect([...caption].length).toBe(2200);
    await s.create(sampleUrl("reel-valid.mp4"), { caption });
  });

  it("answers 100 for a publish without creation_id, an unknown object and an unknown field", async () => {
    const s = sandbox();
    expect((await s.graph("POST", `v21.0/${s.acme}/media_publish`)).body.error).toMatchObject({
      code: 100,
      message: "(#100) The parameter creation_id is required",
    });
    expectGraphError(await s.graph("GET", "v21.0/17999999999999999"), 100, 33);
    expectGraphError(
      await s.graph("GET", `v21.0/${s.acme}/content_publishing_limit`, { fields: "quota_usage,bogus" }),
      100,
    );
  });

  it("answers 2500 for a version Meta has not released or an unknown edge, naming the id as Meta does", async () => {
    const s = sandbox({ GRAPH_VERSION: "v25.0" }); // the configured version is always served
    s.clock.fixed = Date.UTC(2026, 6, 28, 12); // the day before v26.0's release
    const version = await s.graph("GET", `v99.0/${s.acme}/media`);
    expectGraphError(version, 2500);
    expect(version.body.error?.message).toBe(`Unknown path components: /v99.0/${s.acme}/media`);
    expectGraphError(await s.graph("GET", `v26.0/${s.acme}`, { fields: "id" }), 2500);
    const edge = await s.graph("GET", `v21.0/${s.acme}/stories`);
    expectGraphError(edge, 2500);
    expect(edge.body.error?.message).toBe(`Unknown path components: /${s.acme}/stories`);
    const deeper = await s.graph("GET", `v21.0/${s.acme}/media/extra`);
    expect(deeper.body.error?.message).toBe(`Unknown path components: /${s.acme}/media/extra`);
  });

  it("serves every version live on its clock (Meta's table), and answers an ended one as the oldest live version does", async () => {
    const s = sandbox();
    s.clock.fixed = Date.UTC(2026, 11, 7, 12); // v20.0 ended on 2026-09-24; v26.0 came out on 2026-07-29
    for (const version of ["v21.0", "v24.0", "v25.0", "v26.0", "v20.0", "v17.0", "v2.12"]) {
      expect((await s.graph("GET", `${version}/${s.acme}`, { fields: "id,username" })).body, version).toEqual({
        id: s.acme,
        username: "sandbox_acme",
      });
    }
  });
});

describe("the further reel parameters", () => {
  const video = "https://example.com/v.mp4";
  it.each<[string, Record<string, string>, RegExp]>([
    [
      "4 collaborators",
      { collaborators: '["a","b","c","d"]' },
      /Param collaborators must list at most 3 collaborators/,
    ],
    ["collaborators that are not a list", { collaborators: "ana" }, /Param collaborators must be an array/],
    [
      "a collaborator that is no username",
      { collaborators: '["not a name"]' },
      /Param collaborators \(0\) must be an Instagram username/,
    ],
    ["a negative thumb_offset", { thumb_offset: "-1" }, /Param thumb_offset must be a non-negative integer/],
    ["a fractional thumb_offset", { thumb_offset: "1.5" }, /Param thumb_offset must be a non-negative integer/],
    ["a bad graduation_strategy", { trial_params: '{"graduation_strategy":"SOON"}' }, /MANUAL or SS_PERFORMANCE/],
    ["trial_params that are not JSON", { trial_params: "MANUAL" }, /Param trial_params must be an object/],
    [
      "a user tag off the media",
      { user_tags: '[{"username":"ana","x":1.5,"y":0.5}]' },
      /Param user_tags \(0\.x\) must be from 0 to 1/,
    ],
    ["user_tags that are not a list", { user_tags: "ana" }, /Param user_tags must be an array/],
    ["a location_id that is no id", { location_id: "Paris" }, /Param location_id/],
    ["a cover_url that is not http(s)", { cover_url: "ftp://example.com/c.jpg" }, /Param cover_url/],
  ])("answers 100 for %s, and makes no container", async (_name, params, message) => {
    const s = sandbox();
    const answer = await s.graph("POST", `v21.0/${s.acme}/media`, { media_type: "REELS", video_url: video, ...params });
    expectGraphError(answer, 100);
    expect(answer.body.error?.message).toMatch(/^\(#100\) /);
    expect(answer.body.error?.message).toMatch(message);
    expect(await redis.zcard(sandboxKeys.accountContainers(s.acme))).toBe(0);
  });

  it.each<[string, () => string, number, number]>([
    ["it cannot fetch", () => `${filesOrigin}/status/404`, 9004, 2207052],
    ["is not a JPEG", () => sampleUrl("reel-valid.mp4"), 36001, 2207005],
    ["is over 8 MB", () => `${filesOrigin}/big-jpeg`, 36000, 2207004],
  ])("refuses a cover_url %s with Meta's code, and makes no container", async (_name, coverUrl, code, subcode) => {
    const s = sandbox();
    const answer = await s.graph("POST", `v21.0/${s.acme}/media`, {
      media_type: "REELS",
      video_url: sampleUrl("reel-valid.mp4"),
      cover_url: coverUrl(),
    });
    expectGraphError(answer, code, subcode);
    expect(answer.body.error?.is_transient).toBe(false);
    expect(await redis.zcard(sandboxKeys.accountContainers(s.acme))).toBe(0);
  });

  it("keeps every parameter on the container and on the published media", async () => {
    const s = sandbox();
    const params = {
      share_to_feed: "false",
      cover_url: `${filesOrigin}/fixtures/cover.jpg`,
      thumb_offset: "1500",
      audio_name: "Morning run",
      collaborators: '["ana.runs","bo_b"]',
      location_id: "7640348500",
      user_tags: '[{"username":"carla","x":0.5,"y":0.25},{"username":"dan"}]',
      trial_params: '{"graduation_strategy":"SS_PERFORMANCE"}',
    };
    const containerId = await s.create(sampleUrl("reel-valid.mp4"), params);
    const { share_to_feed: _feed, ...reel } = params;
    expect(await readContainerRecord(redis, containerId)).toMatchObject(reel);
    expect((await s.settled(containerId)).status_code).toBe("FINISHED");
    const mediaId = (await s.publish(containerId)).body.id as string;
    expect(await readMediaRecord(redis, mediaId)).toMatchObject({ ...reel, share_to_feed: "false" });
    const media = await s.graph("GET", `v21.0/${mediaId}`, { fields: "is_shared_to_feed,media_product_type" });
    expect(media.body).toMatchObject({ is_shared_to_feed: false, media_product_type: "REELS" });
  });

  it("ends a container whose thumb_offset is past the video's end in ERROR with 2207057, unless a cover_url makes Graph ignore it", async () => {
    const s = sandbox();
    const past = await s.create(sampleUrl("reel-valid.mp4"), { thumb_offset: "600000" });
    const ignored = await s.create(sampleUrl("reel-valid.mp4"), {
      thumb_offset: "600000",
      cover_url: `${filesOrigin}/fixtures/cover.jpg`,
    });
    const error = await s.settled(past);
    expect(error.status_code).toBe("ERROR");
    expect(error.status).toMatch(
      /^Error: Media upload has failed with error code 2207057 \(Thumbnail offset must be greater than or equal to 0 and less than video duration, i\.e\. \d+\)$/,
    );
    expect((await s.settled(ignored)).status_code).toBe("FINISHED");
  });
});

describe("as Meta answers", () => {
  it("words 9/2207042 as Meta does (the maximum number of posts), and content_publishing_limit honours since", async () => {
    const s = sandbox({ SANDBOX_PUBLISH_LIMIT: "1" });
    const first = await s.create(sampleUrl("reel-valid.mp4"));
    await s.settled(first);
    const before = Math.floor(Date.now() / 1000) - 1;
    expect((await s.publish(first)).status).toBe(200);
    const second = await s.create(sampleUrl("reel-valid.mp4"));
    await s.settled(second);
    const refused = await s.publish(second);
    expectGraphError(refused, 9, 2207042);
    expect(refused.body.error).toMatchObject({
      message: "You reached maximum number of posts that is allowed to be published by Content Publishing API.",
      error_user_title: "Max. number of posts reached",
      is_transient: false,
    });
    expect(refused.body.error?.message).not.toMatch(/Application request limit/);

    const limit = (since?: number | string) =>
      s.graph("GET", `v21.0/${s.acme}/content_publishing_limit`, {
        fields: "quota_usage,config",
        ...(since === undefined ? {} : { since: String(since) }),
      });
    expect((await limit()).body.data?.[0]).toMatchObject({ quota_usage: 1 });
    expect((await limit(before)).body.data?.[0]).toMatchObject({ quota_usage: 1 });
    expect((await limit(Math.floor(Date.now() / 1000) + 5)).body.data?.[0]).toMatchObject({ quota_usage: 0 });
    // Older than the moving 24 h: the window counts.
    expect((await limit(before - 3 * 86400)).body.data?.[0]).toMatchObject({ quota_usage: 1 });
    expectGraphError(await limit("yesterday"), 100);
  });

  it("words 190/463 as Meta does: when the session expired and the time now, in Pacific time", async () => {
    // The clock goes back to 2023, before v21.0 came out: the configured version is served whatever the date.
    const s = sandbox({ GRAPH_VERSION: "v21.0" });
    s.clock.fixed = Date.UTC(2023, 5, 19, 13, 29, 46);
    expect((await s.control("POST", `accounts/${s.acme}/token`, { state: "expired" })).status).toBe(200);
    s.clock.fixed = Date.UTC(2023, 6, 4, 9, 11, 32);
    const answer = await s.graph("GET", `v21.0/${s.acme}`, { fields: "id" });
    expectGraphError(answer, 190, 463);
    expect(answer.body.error?.message).toBe(
      "Error validating access token: Session has expired on Monday, 19-Jun-23 06:29:46 PDT. The current time is Tuesday, 04-Jul-23 02:11:32 PDT.",
    );
    s.clock.fixed = Date.UTC(2024, 0, 5, 8, 0, 0);
    expect((await s.graph("GET", `v21.0/${s.acme}`, { fields: "id" })).body.error?.message).toMatch(
      /The current time is Friday, 05-Jan-24 00:00:00 PST\.$/,
    );
  });

  it("sends the usage headers once calls were made, and refuses as Meta does at the limits the control surface sets", async () => {
    const s = sandbox();
    const usage = (answer: GraphAnswer) => ({
      app: JSON.parse(answer.headers.get("x-app-usage") ?? "null") as Record<string, number>,
      account: (
        JSON.parse(answer.headers.get("x-business-use-case-usage") ?? "{}") as Record<string, Record<string, number>[]>
      )[s.acme]?.[0],
    });
    const read = () => s.graph("GET", `v21.0/${s.acme}`, { fields: "id" });

    // The account's first call in the window: Meta sends the headers "once enough calls have been made".
    const first = await read();
    expect(first.status).toBe(200);
    expect([first.headers.get("x-app-usage"), first.headers.get("x-business-use-case-usage")]).toEqual([null, null]);
    const plain = await read();
    expect(plain.status).toBe(200);
    expect(usage(plain)).toMatchObject({
      app: { call_count: expect.any(Number) },
      account: { type: "instagram", estimated_time_to_regain_access: 0 },
    });

    expect(
      (await s.control("PUT", `accounts/${s.acme}/usage`, { call_count: 85, total_time: 40, app: { call_count: 30 } }))
        .status,
    ).toBe(200);
    const busy = await read();
    expect(busy.status).toBe(200);
    expect(usage(busy)).toMatchObject({
      app: { call_count: 30 },
      account: { call_count: 85, total_time: 40, estimated_time_to_regain_access: 0 },
    });

    await s.control("PUT", `accounts/${s.acme}/usage`, { call_count: 100, estimated_time_to_regain_access: 3 });
    const throttled = await read();
    expectGraphError(throttled, 80002);
    expect(throttled.body.error).toMatchObject({
      is_transient: true,
      message: "(#80002) There have been too many calls to this Instagram account. Wait a bit and try again.",
    });
    expect(usage(throttled).account).toMatchObject({ call_count: 100, estimated_time_to_regain_access: 3 });
    // Only this account: another one goes through.
    expect((await s.graph("GET", `v21.0/${s.globex}`, { fields: "id" }, s.tokens.globex)).status).toBe(200);

    try {
      await s.control("PUT", `accounts/${s.acme}/usage`, { app: { total_cputime: 100 } });
      expectGraphError(await read(), 4);
    } finally {
      // The app's figures hold for every account of the sandbox: never leave them at the limit.
      await s.control("PUT", `accounts/${s.acme}/usage`, {});
    }
    expect((await read()).status).toBe(200);
    expect((await s.control("PUT", `accounts/${s.acme}/usage`, { call_count: "lots" })).status).toBe(422);
  });

  it("answers a queued 4/2207051 in Meta's words, as a restriction and not a rate limit", async () => {
    const s = sandbox();
    await s.control("POST", `accounts/${s.acme}/faults`, {
      on: "media_publish",
      code: 4,
      error_subcode: 2207051,
      count: 1,
    });
    const id = await s.create(sampleUrl("reel-valid.mp4"));
    await s.settled(id);
    const refused = await s.publish(id);
    expectGraphError(refused, 4, 2207051);
    expect(refused.body.error).toMatchObject({
      is_transient: false,
      message: "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
    });
    const account = JSON.parse(refused.headers.get("x-business-use-case-usage") ?? "{}")[s.acme][0];
    expect(account.estimated_time_to_regain_access).toBe(0);
    expect(account.call_count).toBeLessThan(100);
  });

  it("answers the resumable upload's failures as {debug_info}, with the usage headers", async () => {
    const s = sandbox();
    const created = await s.graph("POST", `v21.0/${s.acme}/media`, { media_type: "REELS", upload_type: "resumable" });
    const uri = created.body.uri as string;
    const send = (headers: Record<string, string>) =>
      handleGraphRequest(new Request(uri, { method: "POST", headers, body: new Uint8Array(16) }), s.deps);

    const noToken = await send({ offset: "0", file_size: "16" });
    // Meta's documented answer to a refused token (graph-reference.md, "Resumable upload"); its HTTP status is not documented.
    expect(noToken.status).toBe(400);
    expect(await noToken.json()).toEqual({
      debug_info: {
        retriable: false,
        type: "ProcessingFailedError",
        message: '{"success":false,"error":{"message":"unauthorized user request"}}',
      },
    });

    await s.control("POST", `accounts/${s.acme}/faults`, { on: "upload", code: 80002, count: 1 });
    const limited = await send({ authorization: `OAuth ${s.tokens.acme}`, offset: "0", file_size: "16" });
    expect(limited.status).toBe(400);
    expect(((await limited.json()) as { debug_info: unknown }).debug_info).toMatchObject({
      retriable: true,
      type: "ProcessingFailedError",
    });
    expect(JSON.parse(limited.headers.get("x-business-use-case-usage") ?? "{}")[s.acme][0]).toMatchObject({
      call_count: 100,
      estimated_time_to_regain_access: 1,
    });

    await s.control("POST", `accounts/${s.acme}/faults`, { on: "upload", code: 190, error_subcode: 460, count: 1 });
    const refused = await send({ authorization: `OAuth ${s.tokens.acme}`, offset: "0", file_size: "16" });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { debug_info: unknown }).debug_info).toEqual({
      retriable: false,
      type: "ProcessingFailedError",
      message: '{"success":false,"error":{"message":"unauthorized user request"}}',
    });
  });

  it("takes as long to process as the control surface says, per account and per container", async () => {
    const s = sandbox({ SANDBOX_PROCESSING_MS: "50" });
    expect((await s.control("PUT", `accounts/${s.acme}/processing`, { processing_ms: 1500 })).body).toEqual({
      account_id: s.acme,
      processing_ms: 1500,
    });
    const started = Date.now();
    const slow = await s.create(sampleUrl("reel-valid.mp4"));
    expect((await s.settled(slow)).status_code).toBe("FINISHED");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);

    // A container that would take an hour is made quick while it processes.
    await s.control("PUT", `accounts/${s.acme}/processing`, { processing_ms: 3_600_000 });
    const hour = await s.create(sampleUrl("reel-valid.mp4"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await s.statusOf(hour)).status_code).toBe("IN_PROGRESS");
    expect((await s.control("PUT", `containers/${hour}/processing`, { processing_ms: 0 })).status).toBe(200);
    expect((await s.settled(hour)).status_code).toBe("FINISHED");

    await s.control("PUT", `accounts/${s.acme}/processing`, { processing_ms: null });
    expect((await s.control("PUT", "containers/17999999999999999/processing", { processing_ms: 10 })).status).toBe(404);
  });
});

describe("surviving a restart", () => {
  /** A process that dies mid-download: its fetch never answers, and it never beats again once replaced. */
  function dyingProcess(s: ReturnType<typeof sandbox>): SandboxDeps {
    const neverConnects = new Agent({ connect: () => {} });
    const deps: SandboxDeps = { ...s.deps, dispatcher: neverConnects, limits: { heartbeatMs: 50 } };
    everyDeps.push(deps);
    return deps;
  }

  it("a fresh process takes over a stale IN_PROGRESS container when it is read", async () => {
    const s = sandbox();
    const dying = dyingProcess(s);
    const response = await handleGraphRequest(
      new Request(`http://sandbox.test/graph/v21.0/${s.acme}/media`, {
        method: "POST",
        body: new URLSearchParams({
          media_type: "REELS",
          video_url: sampleUrl("reel-valid.mp4"),
          access_token: s.tokens.acme,
        }),
      }),
      dying,
    );
    const { id } = (await response.json()) as { id: string };
    expect((await s.statusOf(id)).status_code).toBe("IN_PROGRESS");

    // The restarted server: new deps, and a clock past the stale window of the old heartbeat.
    const restarted: SandboxDeps = { ...s.deps, now: () => Date.now() + 60_000 };
    everyDeps.push(restarted);
    expect((await s.statusOf(id, restarted)).status_code).toBe("IN_PROGRESS");
    expect((await s.settled(id, restarted)).status_code).toBe("FINISHED");
    await settleSandboxProcessing(dying); // the old attempt noticed it lost the container and stopped
    expect((await s.statusOf(id)).status_code).toBe("FINISHED");
  });

  it("resumeSandboxProcessing at start-up finishes stale containers", async () => {
    const s = sandbox();
    const dying = dyingProcess(s);
    const ids: string[] = [];
    for (const name of ["reel-valid.mp4", "reel-too-short.mp4"]) {
      const response = await handleGraphRequest(
        new Request(`http://sandbox.test/graph/v21.0/${s.acme}/media`, {
          method: "POST",
          body: new URLSearchParams({ media_type: "REELS", video_url: sampleUrl(name), access_token: s.tokens.acme }),
        }),
        dying,
      );
      ids.push(((await response.json()) as { id: string }).id);
    }
    const restarted: SandboxDeps = { ...s.deps, now: () => Date.now() + 60_000 };
    everyDeps.push(restarted);
    const { resumed } = await resumeSandboxProcessing(restarted, { recheck: false });
    expect(resumed).toBeGreaterThanOrEqual(2);
    await settleSandboxProcessing(restarted);
    expect((await s.statusOf(ids[0]!)).status_code).toBe("FINISHED");
    expect((await s.statusOf(ids[1]!)).status).toMatch(/^Error: Media upload has failed with error code 2207026 /);
    await settleSandboxProcessing(dying);
  });
});

describe("Meta's two hosts", () => {
  const loginTokens = async (s: ReturnType<typeof sandbox>) => ({
    instagram: await issueToken(s.deps, s.acme, { login: "instagram" }),
    facebook: await issueToken(s.deps, s.acme, { login: "facebook" }),
  });

  it("takes Instagram Login's tokens on graph.instagram.com only and Facebook Login's on graph.facebook.com only", async () => {
    const s = sandbox();
    const t = await loginTokens(s);
    const read = (host: string, token: string) => s.graph("GET", `${host}v26.0/${s.acme}`, { fields: "id" }, token);
    expect((await read("instagram/", t.instagram)).body).toEqual({ id: s.acme });
    expect((await read("facebook/", t.facebook)).body).toEqual({ id: s.acme });
    for (const [host, token] of [
      ["facebook/", t.instagram],
      ["instagram/", t.facebook],
    ] as const) {
      const refused = await read(host, token);
      expectGraphError(refused, 190);
      expect(refused.body.error).toMatchObject({
        type: "OAuthException",
        message: "Invalid OAuth access token - Cannot parse access token",
      });
    }
    // A token no login made (REEL_ACCOUNTS, the control surface's) works on both; /graph itself takes any token.
    for (const host of ["instagram/", "facebook/", ""]) {
      expect((await read(host, s.tokens.acme)).body, host).toEqual({ id: s.acme });
    }
    expect((await read("", t.instagram)).body).toEqual({ id: s.acme });
    expect((await read("", t.facebook)).body).toEqual({ id: s.acme });
  });

  it("names the foreign-object error IGApiException on the Instagram host, GraphMethodException on the Facebook host", async () => {
    const s = sandbox();
    const t = await loginTokens(s);
    const instagram = await s.graph("GET", `instagram/v26.0/${s.globex}/media`, {}, t.instagram);
    expect(instagram.status).toBe(400);
    expect(instagram.body.error).toMatchObject({ code: 100, error_subcode: 33, type: "IGApiException" });
    const facebook = await s.graph("GET", `facebook/v26.0/${s.globex}/media`, {}, t.facebook);
    expectGraphError(facebook, 100, 33);
    expect(facebook.body.error?.type).toBe("GraphMethodException");
  });

  it("hands out upload and media addresses on the host the call came to", async () => {
    const s = sandbox();
    const created = await s.graph(
      "POST",
      `facebook/v26.0/${s.acme}/media`,
      { media_type: "REELS", upload_type: "resumable" },
      s.tokens.acme,
    );
    expect(created.body.uri).toMatch(/^http:\/\/sandbox\.test\/graph\/facebook\/ig-api-upload\/v26\.0\/\d+$/);
  });
});

describe("oauth/access_token by POST", () => {
  it("answers POST /{version}/oauth/access_token as Facebook's exchange, exactly as GET", async () => {
    const s = sandbox({ FACEBOOK_APP_ID: "2234567890123", FACEBOOK_APP_SECRET: "post-exchange-secret" });
    const params = {
      client_id: "2234567890123",
      client_secret: "post-exchange-secret",
      redirect_uri: "https://dispatch.example/callback",
      code: "not-a-code",
    };
    const answers = [
      await s.graph("POST", "v26.0/oauth/access_token", params, null),
      await s.graph("GET", "v26.0/oauth/access_token", params, null),
      await s.graph("POST", "facebook/oauth/access_token", params, null),
    ];
    for (const answer of answers) {
      expectGraphError(answer, 100);
      expect(answer.body.error?.message).toBe("Invalid verification code format.");
    }
  });
});

describe("caption limits", () => {
  it.each([
    ["2,201 characters", "a".repeat(2201), 36004, 2207010],
    ["31 hashtags", Array.from({ length: 31 }, (_, i) => `#tag${i}`).join(" "), 36004, 2207010],
    ["21 @-tags", Array.from({ length: 21 }, (_, i) => `@user${i}`).join(" "), 100, 2207040],
  ])("refuses a caption of %s with Meta's code at container creation", async (_case, caption, code, subcode) => {
    const s = sandbox();
    const answer = await s.graph("POST", `v26.0/${s.acme}/media`, {
      media_type: "REELS",
      video_url: "https://example.com/v.mp4",
      caption,
    });
    expectGraphError(answer, code, subcode);
    expect(answer.body.error?.is_transient).toBe(false);
  });
});

describe("the usage window", () => {
  it("counts the last hour, sliding, not the clock hour", async () => {
    const s = sandbox();
    const start = Date.UTC(2026, 11, 7, 10, 59, 0);
    const callCount = async (at: number) => {
      s.clock.fixed = at;
      const answer = await s.graph("GET", `v26.0/${s.acme}`, { fields: "id" });
      const header = answer.headers.get("x-business-use-case-usage");
      return header === null ? null : (JSON.parse(header) as Record<string, { call_count: number }[]>)[s.acme]![0]!;
    };
    expect(await callCount(start)).toBeNull();
    // 49 more calls in the same minute: 50 in the window is 1 % of 4,800.
    for (let i = 0; i < 48; i++) await callCount(start + 1000);
    expect((await callCount(start + 2000))?.call_count).toBe(1);
    // Past the hour's turn the earlier calls still count; once they are an hour old they no longer do.
    expect((await callCount(start + 2 * 60_000))?.call_count).toBe(1);
    expect(await callCount(start + 62 * 60_000)).toBeNull();
  });
});

describe("what a page or a hostile body cannot do (issue 46)", () => {
  const controlRequest = (pathname: string, headers: Record<string, string>, body: string) =>
    handleGraphRequest(
      new Request(`http://127.0.0.1:3000/graph/_sandbox/${pathname}`, {
        method: "POST",
        headers: { host: "127.0.0.1:3000", "x-dispatch-peer": "127.0.0.1", ...headers },
        body,
      }),
      sandbox().deps,
    );
  const fault = JSON.stringify({ on: "media", code: 190, count: 5 });

  it("a page of another site cannot queue faults, create accounts or revoke tokens, text/plain or JSON", async () => {
    const s = sandbox();
    const send = (pathname: string, headers: Record<string, string>, body: string) =>
      handleGraphRequest(
        new Request(`http://127.0.0.1:3000/graph/_sandbox/${pathname}`, {
          method: "POST",
          headers: { host: "127.0.0.1:3000", "x-dispatch-peer": "127.0.0.1", ...headers },
          body,
        }),
        s.deps,
      );
    const evil = { origin: "http://evil.example", "sec-fetch-site": "cross-site" };
    for (const [pathname, body] of [
      [`accounts/${s.acme}/faults`, fault],
      ["accounts", "{}"],
      [`accounts/${s.acme}/token`, JSON.stringify({ state: "revoked" })],
    ]) {
      for (const headers of [
        { "content-type": "text/plain", ...evil },
        { "content-type": "application/json", ...evil },
        { "content-type": "application/json", origin: "http://evil.example" },
        { "content-type": "application/json", origin: "null" },
      ]) {
        const response = await send(pathname, headers, body);
        expect(response.status, `${pathname} ${JSON.stringify(headers)}`).toBe(403);
        expect(response.headers.get("content-type")).toBe("application/problem+json");
      }
    }
    // Nothing was queued: the account's calls still succeed.
    expect((await s.graph("GET", `v21.0/${s.acme}/media`)).status).toBe(200);
  });

  it("takes JSON only, even from this machine, and still answers its own origin and a typed-in request", async () => {
    const s = sandbox();
    const send = (headers: Record<string, string>) =>
      handleGraphRequest(
        new Request(`http://127.0.0.1:3000/graph/_sandbox/accounts/${s.acme}/faults`, {
          method: "POST",
          headers: { host: "127.0.0.1:3000", "x-dispatch-peer": "127.0.0.1", ...headers },
          body: fault,
        }),
        s.deps,
      );
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
      expect((await send({ "content-type": type })).status, type).toBe(415);
    expect((await send({})).status).toBe(415);
    expect((await send({ "content-type": "application/json", "sec-fetch-site": "same-origin" })).status).toBe(201);
    expect((await send({ "content-type": "application/json", origin: "http://127.0.0.1:3000" })).status).toBe(201);
    expect((await send({ "content-type": "application/json", "sec-fetch-site": "none" })).status).toBe(201);
  });

  it("refuses a control body nested past 64 levels with 400 problem+json, before its schema sees it", async () => {
    const response = await controlRequest(
      "accounts",
      { "content-type": "application/json" },
      `{"username":"deep","x":${"[".repeat(5000)}${"]".repeat(5000)}}`,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, type: "/problems/bad-json" });
  });

  it("refuses a Graph JSON body nested past 64 levels with (#100), as it refuses any unreadable body", async () => {
    const s = sandbox();
    const response = await handleGraphRequest(
      new Request(`http://sandbox.test/graph/v21.0/${s.acme}/media`, {
        method: "POST",
        headers: { authorization: `OAuth ${s.tokens.acme}`, "content-type": "application/json" },
        body: `{"media_type":"REELS","user_tags":${'{"a":'.repeat(40_000)}1${"}".repeat(40_000)}}`,
      }),
      s.deps,
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      code: 100,
      message: expect.stringMatching(/nests more than 64/),
    });
  });
});
