import { execFileSync } from "node:child_process";
import { createHash, randomInt, randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import path from "node:path";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { createKafka, createProducer } from "@/lib/kafka";
import { createRedis, type Redis } from "@/lib/redis";
import type { PublicationView } from "@/lib/reels/publication";
import { startPublicationConsumer } from "@/lib/reels/publication-consumer";
import { REEL_SPEC_VIOLATION } from "@/lib/video/reel-spec";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { UPLOAD_SUCCESS } from "@/lib/graph/sandbox/upload-container";
import { ENDED_UPLOAD_TTL_S, readUpload, uploadKeys, uploadsDir } from "@/lib/uploads/upload-store";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { chunkedBody, expectProblem, inProcessWorker, ROOT, waitFor } from "../helpers";
import { closeServers, listen, origin, sandboxHandler, type SandboxCall } from "../sandbox-server";
import { largeReel } from "../large-reel";
import { moovWithoutMvhd, moovWithoutTracks } from "../mp4-boxes";

/**
 * Local files and the preflight, on the real stack: the upload route, the real Redis and broker,
 * the worker's publication consumer in this process, and the Graph sandbox served on another
 * local origin, so GRAPH_URL is "not the sandbox" for the worker, which therefore preflights.
 * Every Graph call is recorded with its parameters and a digest of its body.
 */

const SAMPLES = path.join(ROOT, "public/samples");
const FIXTURES = path.join(ROOT, "tests/fixtures");
const DATA_DIR = path.join(ROOT, ".test-data/uploads");
const ACME_KEY = "acme-uploads-key-0123456789abcdef";
const QUOTA_KEY = "quota-uploads-key-0123456789abcdef";
const BURST_KEY = "burst-uploads-key-0123456789abcdef";
const UPLOAD_MAX_BYTES = 400_000;
const UPLOAD_TENANT_QUOTA_BYTES = 1_000_000;
const ACCOUNTS = ["upload", "multipart", "short", "warn", "plain", "large", "quota"] as const;
const account = Object.fromEntries(ACCOUNTS.map((name) => [name, `1785${randomInt(1e9, 1e10)}`])) as Record<
  (typeof ACCOUNTS)[number],
  string
>;
const token = (id: string) => `token-${id}-secret`;

interface GraphCall {
  method: string;
  path: string;
  params: Record<string, string>;
  headers: Record<string, string>;
  bodySha256: string;
  bodyBytes: number;
}
interface FileRequest {
  path: string;
  range: string | undefined;
  bytesSent: number;
}

let redis: Redis;
let files: Server;
let graphServer: Server;
let sandbox: SandboxDeps;
let config: Config;
let producer: Producer;
let worker: RunningConsumer;
let largeMoovAtEnd: string;
const graphCalls: GraphCall[] = [];
const fileRequests: FileRequest[] = [];
let routes: {
  uploads: typeof import("@/app/api/uploads/route");
  reels: typeof import("@/app/api/reels/route");
  reel: typeof import("@/app/api/reels/[id]/route");
};

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  largeMoovAtEnd = moovAtEndCopy(largeReel(ROOT));
  redis = createRedis(inject("redisUrl"));
  files = await listen(serveFile);
  graphServer = await listen(sandboxHandler(() => sandbox, recordGraphCall));
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `acme:${ACME_KEY},quota:${QUOTA_KEY},burst:${BURST_KEY}`,
    REEL_ACCOUNTS: ACCOUNTS.map(
      (name) => `${name === "quota" ? "quota" : "acme"}:${account[name]}:${token(account[name])}`,
    ).join(","),
    GRAPH_URL: `${origin(graphServer)}/graph`,
    REEL_POLL_INTERVAL_MS: "50",
    REEL_POLL_ATTEMPTS: "100",
    SANDBOX_PROCESSING_MS: "200",
    ALLOW_PRIVATE_URLS: "true",
    DATA_DIR,
    UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES),
    UPLOAD_TENANT_QUOTA_BYTES: String(UPLOAD_TENANT_QUOTA_BYTES),
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  expect(config.GRAPH_SANDBOX).toBe(false);
  sandbox = { redis, config, log: () => {}, now: () => Date.now() };
  producer = createProducer(createKafka(config.KAFKA_BROKERS, "uploads-test"));
  await producer.connect();
  routes = {
    uploads: await import("@/app/api/uploads/route"),
    reels: await import("@/app/api/reels/route"),
    reel: await import("@/app/api/reels/[id]/route"),
  };
  const workerId = `uploads-test-${randomUUID().slice(0, 8)}`;
  const ctx = inProcessWorker({ config, redis, producer, log: () => {} }, workerId);
  worker = await startPublicationConsumer(ctx);
});

afterAll(async () => {
  await worker?.stop(0).catch(() => {});
  await settleSandboxProcessing(sandbox);
  await producer?.disconnect().catch(() => {});
  const { getServices } = await import("@/lib/web/services");
  const services = getServices();
  await (await services.producer()).disconnect().catch(() => {});
  services.redis.disconnect();
  await closeServers(files, graphServer);
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
});

/** The large reel with its moov moved to the end (ffmpeg's default), made once next to it. */
function moovAtEndCopy(file: string): string {
  const copy = file.replace(/\.mp4$/, "-moov-at-end.mp4");
  if (existsSync(copy)) return copy;
  const partial = `${copy}.${process.pid}.mp4`;
  execFileSync("ffmpeg", ["-v", "error", "-y", "-i", file, "-c", "copy", "-map_metadata", "-1", partial]);
  execFileSync("mv", [partial, copy]);
  return copy;
}

function recordGraphCall({ method, url, headers, body }: SandboxCall) {
  const isForm = (headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded");
  graphCalls.push({
    method,
    path: url.pathname,
    params: {
      ...Object.fromEntries(url.searchParams),
      ...(isForm ? Object.fromEntries(new URLSearchParams(body.toString())) : {}),
    },
    headers,
    bodySha256: sha256(body),
    bodyBytes: body.length,
  });
}

/** `/ranges/{file}` honours Range like a CDN; `/plain/{file}` ignores it and sends the whole file. */
function serveFile(req: IncomingMessage, res: ServerResponse) {
  const [mode, name = ""] = new URL(req.url ?? "/", "http://x").pathname.split("/").filter(Boolean);
  const file =
    name === "large-moov-at-end.mp4"
      ? largeMoovAtEnd
      : [FIXTURES, SAMPLES].map((dir) => path.join(dir, path.basename(name))).find(existsSync);
  if (!file) return res.writeHead(404).end();
  const bytes = readFileSync(file);
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
  let body = bytes;
  if (mode === "ranges" && range) {
    const start = Number(range[1]);
    const end = Math.min(range[2] ? Number(range[2]) : bytes.length - 1, bytes.length - 1);
    body = bytes.subarray(start, end + 1);
    res.writeHead(206, {
      "content-type": "video/mp4",
      "content-range": `bytes ${start}-${end}/${bytes.length}`,
      "accept-ranges": "bytes",
    });
  } else {
    res.writeHead(200, { "content-type": "video/mp4" });
  }
  fileRequests.push({ path: `/${mode}/${name}`, range: req.headers.range, bytesSent: body.length });
  res.end(body);
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const auth = (key = ACME_KEY) => ({ authorization: `Bearer ${key}` });

function upload(body: BodyInit, contentType: string, key = ACME_KEY): Promise<Response> {
  return routes.uploads.POST(
    new Request("http://dispatch.test/api/uploads", {
      method: "POST",
      headers: { ...auth(key), "content-type": contentType },
      body,
      duplex: "half",
    } as RequestInit),
    undefined,
  );
}

async function uploadFile(file: string, key = ACME_KEY): Promise<{ upload_id: string; size: number }> {
  const response = await upload(readFileSync(file), "video/mp4", key);
  expect(response.status).toBe(201);
  return response.json();
}

async function create(body: Record<string, unknown>, key = ACME_KEY) {
  const response = await routes.reels.POST(
    new Request("http://dispatch.test/api/reels", {
      method: "POST",
      headers: { ...auth(key), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );
  return { status: response.status, response, body: (await response.clone().json()) as { publication_id: string } };
}

async function settled(id: string, key = ACME_KEY): Promise<PublicationView> {
  return waitFor(
    async () => {
      const response = await routes.reel.GET(
        new Request(`http://dispatch.test/api/reels/${id}`, { headers: auth(key) }),
        { params: Promise.resolve({ id }) },
      );
      const body = (await response.json()) as PublicationView;
      return ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(body.status) ? body : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `publication ${id} to settle` },
  );
}

const callsOf = (accountId: string, edge: string, method = "POST") =>
  graphCalls.filter((c) => c.method === method && c.path === `/graph/${config.GRAPH_VERSION}/${accountId}/${edge}`);
const uploadCalls = (containerId: string) =>
  graphCalls.filter(
    (c) => c.method === "POST" && c.path === `/graph/ig-api-upload/${config.GRAPH_VERSION}/${containerId}`,
  );
const filesOf = async (tenant: string) => readdir(path.join(uploadsDir(DATA_DIR), tenant)).catch(() => [] as string[]);

describe("POST /api/uploads", () => {
  it("stores an MP4 sent as the body and answers 201 with its id and size", async () => {
    const file = path.join(SAMPLES, "reel-valid.mp4");
    const answer = await uploadFile(file);
    expect(answer).toEqual({ upload_id: expect.stringMatching(/^[0-9a-f-]{36}$/), size: statSync(file).size });
    expect(await readUpload(redis, answer.upload_id)).toMatchObject({
      tenant_id: "acme",
      size: answer.size,
      mime: "video/mp4",
      publication_id: "",
    });
  });

  it("takes the file out of a multipart form, streamed, byte for byte", async () => {
    const bytes = readFileSync(path.join(SAMPLES, "reel-valid.mp4"));
    const form = new FormData();
    form.set("note", "a text field before the file");
    form.set("file", new Blob([bytes], { type: "video/mp4" }), "reel.mp4");
    const encoded = new Response(form);
    const response = await upload(await encoded.arrayBuffer(), encoded.headers.get("content-type") ?? "");
    expect(response.status).toBe(201);
    const { upload_id, size } = (await response.json()) as { upload_id: string; size: number };
    expect(size).toBe(bytes.length);
    const record = await readUpload(redis, upload_id);
    expect(sha256(readFileSync(path.join(uploadsDir(DATA_DIR), record?.file ?? "")))).toBe(sha256(bytes));
  });

  it("refuses other types (415), bodies over UPLOAD_MAX_BYTES (413) and files that are not MP4/MOV (422), keeping nothing", async () => {
    const before = await filesOf("acme");
    await expectProblem(await upload("hello", "text/plain"), 415);
    const tooLarge = await expectProblem(await upload(new Uint8Array(UPLOAD_MAX_BYTES + 1), "video/mp4"), 413);
    expect(tooLarge.detail).toMatch(/over the .* upload limit/);
    const notMp4 = await expectProblem(
      await upload(new TextEncoder().encode("<html>not a video</html>".repeat(100)), "video/mp4"),
      422,
    );
    expect(notMp4.detail).toMatch(/not an MP4 or MOV video/);
    expect(await filesOf("acme")).toEqual(before);
  });

  it("holds a tenant to UPLOAD_TENANT_QUOTA_BYTES, and frees the room when an upload's publication ends", async () => {
    const file = path.join(SAMPLES, "reel-valid.mp4");
    const size = statSync(file).size;
    const fits = Math.floor(UPLOAD_TENANT_QUOTA_BYTES / size);
    const ids: string[] = [];
    for (let i = 0; i < fits; i++) ids.push((await uploadFile(file, QUOTA_KEY)).upload_id);
    const over = await expectProblem(await upload(readFileSync(file), "video/mp4", QUOTA_KEY), 413);
    expect(over.detail).toMatch(/quota/);
    expect(await filesOf("quota")).toHaveLength(fits);

    const { body } = await create({ account_id: account.quota, upload_id: ids[0] }, QUOTA_KEY);
    expect((await settled(body.publication_id, QUOTA_KEY)).status).toBe("PUBLISHED");
    await waitFor(async () => (await readUpload(redis, ids[0] ?? "")) === undefined, {
      what: "the published upload to be freed",
    });
    expect(await filesOf("quota")).toHaveLength(fits - 1);
    await uploadFile(file, QUOTA_KEY);
  });
});

/** A multipart body as a browser writes it: its boundary in mixed case, a text field, then the file. */
function browserForm(boundary: string, file: Uint8Array, field = "a caption"): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${field}\r\n`),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="reel.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

/** A chunked body (no Content-Length) of the given pieces; each piece after the first waits for `gate`. */
function streamOf(pieces: Uint8Array[], gate: Promise<void> = Promise.resolve()): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next > 0) await gate;
      const piece = pieces[next++];
      if (piece) controller.enqueue(piece);
      else controller.close();
    },
  });
}

describe("POST /api/uploads under abuse", () => {
  it("reads a browser's mixed-case multipart boundary as sent (Chromium's ----WebKitFormBoundary…)", async () => {
    const bytes = readFileSync(path.join(SAMPLES, "reel-valid.mp4"));
    const boundary = "----WebKitFormBoundaryAbCdEfGhIjKlMnOp";
    const response = await upload(
      new Uint8Array(browserForm(boundary, bytes)),
      `multipart/form-data; boundary=${boundary}`,
    );
    expect(response.status).toBe(201);
    const record = await readUpload(redis, ((await response.json()) as { upload_id: string }).upload_id);
    expect(sha256(readFileSync(path.join(uploadsDir(DATA_DIR), record?.file ?? "")))).toBe(sha256(bytes));
  });

  it("reads a form to its end when the file part is followed by more (another field) instead of cancelling the body, which resets a client's connection", async () => {
    const bytes = readFileSync(path.join(SAMPLES, "reel-valid.mp4"));
    const boundary = "----WebKitFormBoundaryLaterField";
    const pieces = [
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="reel.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
      ),
      bytes,
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="caption"\r\n\r\n`),
      Buffer.from("c".repeat(200_000)),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ];
    // Behind Next.js a cancelled request body destroys the socket: the client, still sending the
    // caption, got ECONNRESET instead of its 201 (seen with a real server and a late caption).
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const piece = pieces[pulled++];
        if (piece) controller.enqueue(new Uint8Array(piece));
        else controller.close();
      },
      cancel() {
        cancelled = true;
      },
    });
    const response = await upload(body, `multipart/form-data; boundary=${boundary}`);
    expect(response.status).toBe(201);
    expect(cancelled).toBe(false);
    expect(pulled).toBe(pieces.length + 1);
    const record = await readUpload(redis, ((await response.json()) as { upload_id: string }).upload_id);
    expect(sha256(readFileSync(path.join(uploadsDir(DATA_DIR), record?.file ?? "")))).toBe(sha256(bytes));
  });

  it("counts every byte of a chunked multipart body: no file part past the limit, or a huge field before a small video, is a 413", async () => {
    const boundary = "----WebKitFormBoundaryZyXw";
    const noFile = chunkedBody(UPLOAD_MAX_BYTES * 20);
    const type = `multipart/form-data; boundary=${boundary}`;
    await expectProblem(
      await upload(
        after(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n`), noFile.body),
        type,
      ),
      413,
    );
    expect(noFile.pulled()).toBeLessThan(UPLOAD_MAX_BYTES * 2);

    const video = readFileSync(path.join(SAMPLES, "reel-valid.mp4"));
    const bigField = browserForm(boundary, video, "x".repeat(UPLOAD_MAX_BYTES * 2));
    const before = await filesOf("acme");
    await expectProblem(await upload(streamOf([bigField.subarray(0, 1000), bigField.subarray(1000)]), type), 413);
    expect(await filesOf("acme")).toEqual(before);
  });

  it("refuses a malformed MP4 (a moov without mvhd) and a movie with no video track as 422s, keeping nothing", async () => {
    const before = await filesOf("burst");
    const malformed = await expectProblem(await upload(new Uint8Array(moovWithoutMvhd), "video/mp4", BURST_KEY), 422);
    expect(malformed.detail).toBe(
      "The file is not an MP4 or MOV video: the MP4/MOV structure is invalid: a required box is missing or malformed.",
    );
    const noVideo = await expectProblem(await upload(new Uint8Array(moovWithoutTracks()), "video/mp4", BURST_KEY), 422);
    expect(noVideo.detail).toBe("The file has no video track: a reel needs one.");
    expect(await filesOf("burst")).toEqual(before);
    expect(await redis.hlen(uploadKeys.tenant("burst"))).toBe(0);
  });

  it("reserves the quota while bodies stream in: parallel uploads past it are refused before they finish, and never fill the disk past it", async () => {
    const bytes = readFileSync(path.join(SAMPLES, "reel-valid.mp4"));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const answers = Array.from({ length: 8 }, () =>
      upload(streamOf([bytes.subarray(0, 100_000), bytes.subarray(100_000)], gate), "video/mp4", BURST_KEY),
    );
    const settledAnswers = answers.map((answer) => answer.then((response) => response.status));
    const statuses: (number | undefined)[] = [];
    settledAnswers.forEach((status, i) => void status.then((s) => (statuses[i] = s)));
    // While every body is held mid-way, those the quota cannot take are already answered.
    await waitFor(() => statuses.filter((s) => s === 413).length >= 4, {
      what: "the uploads past the quota to be refused mid-stream",
    });
    expect(statuses.filter((s) => s !== undefined && s !== 413)).toEqual([]);
    open();
    const final = await Promise.all(settledAnswers);
    expect(final.filter((s) => s === 201).length).toBeGreaterThanOrEqual(2);
    expect(final.every((s) => s === 201 || s === 413)).toBe(true);
    const stored = Object.values(await redis.hgetall(uploadKeys.tenant("burst"))).reduce(
      (sum, size) => sum + Number(size),
      0,
    );
    expect(stored).toBe(final.filter((s) => s === 201).length * bytes.length);
    expect(stored).toBeLessThanOrEqual(UPLOAD_TENANT_QUOTA_BYTES);
    expect((await filesOf("burst")).filter((name) => name.endsWith(".part"))).toEqual([]);
  });
});

/** `first`, then the chunks of `rest`, as one chunked body. */
function after(first: Uint8Array, rest: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = rest.getReader();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        return controller.enqueue(first);
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

describe("publishing an upload through Graph's resumable flow", () => {
  it("creates the container with upload_type=resumable, sends exactly the file's bytes to its uri, and publishes it", async () => {
    const file = path.join(SAMPLES, "reel-valid.mp4");
    const bytes = readFileSync(file);
    const { upload_id } = await uploadFile(file);
    const caption = `upload ${randomUUID()}`;
    const answer = await create({ account_id: account.upload, upload_id, caption });
    expect(answer.status).toBe(202);

    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("PUBLISHED");
    expect(p).toMatchObject({ upload_id, video_url: null, warnings: [] });
    expect(p.steps.map((s) => s.step)).toEqual([
      "queued",
      "preflight",
      "creating",
      "created",
      "uploading",
      "uploaded",
      "publishing",
      "published",
    ]);

    const creates = callsOf(account.upload, "media");
    expect(creates).toHaveLength(1);
    expect(creates[0]?.params).toMatchObject({ media_type: "REELS", upload_type: "resumable", caption });
    expect(creates[0]?.params.video_url).toBeUndefined();
    const uploads = uploadCalls(p.container_id ?? "");
    expect(uploads).toHaveLength(1);
    expect(uploads[0]?.headers).toMatchObject({
      authorization: `OAuth ${token(account.upload)}`,
      offset: "0",
      file_size: String(bytes.length),
    });
    expect(uploads[0]).toMatchObject({ bodyBytes: bytes.length, bodySha256: sha256(bytes) });
    expect(callsOf(account.upload, "media_publish")).toHaveLength(1);

    // The reel Graph serves back is the uploaded file itself.
    const media = await (
      await fetch(
        `${origin(graphServer)}/graph/v21.0/${p.post_id}?fields=media_url&access_token=${token(account.upload)}`,
      )
    ).json();
    const served = Buffer.from(await (await fetch(media.media_url)).arrayBuffer());
    expect(sha256(served)).toBe(sha256(bytes));
    // Published: the upload is freed.
    await waitFor(async () => (await readUpload(redis, upload_id)) === undefined, { what: "the upload to be freed" });
  });

  it("frees the upload of a publication cancelled before its time", async () => {
    const { upload_id } = await uploadFile(path.join(SAMPLES, "reel-valid.mp4"));
    const publishAt = new Date(Date.now() + 3_600_000).toISOString();
    const { status, body } = await create({ account_id: account.multipart, upload_id, publish_at: publishAt });
    expect(status).toBe(202);
    expect(await readUpload(redis, upload_id)).toMatchObject({ publication_id: body.publication_id });
    const id = body.publication_id;
    const cancelled = await routes.reel.DELETE(
      new Request(`http://dispatch.test/api/reels/${id}`, { method: "DELETE", headers: auth() }),
      { params: Promise.resolve({ id }) },
    );
    expect(cancelled.status).toBe(200);
    expect(await readUpload(redis, upload_id)).toBeUndefined();
    expect((await filesOf("acme")).filter((name) => name.startsWith(upload_id))).toEqual([]);
  });

  it("takes exactly one of video_url and upload_id, an upload of this tenant only, and each upload once", async () => {
    const { upload_id } = await uploadFile(path.join(SAMPLES, "reel-valid.mp4"));
    const both = await create({
      account_id: account.multipart,
      upload_id,
      video_url: `${origin(files)}/ranges/reel-valid.mp4`,
    });
    expect(both.status).toBe(422);
    expect((await create({ account_id: account.multipart })).status).toBe(422);
    const foreign = await create({ account_id: account.quota, upload_id }, QUOTA_KEY);
    expect(foreign.status).toBe(422);
    const first = await create({ account_id: account.multipart, upload_id });
    expect(first.status).toBe(202);
    const again = await create({ account_id: account.multipart, upload_id });
    expect(again.status).toBe(422);
    expect(JSON.stringify(await again.response.json())).toMatch(/already used/);
    expect((await settled(first.body.publication_id)).status).toBe("PUBLISHED");
  });

  it("answers at the sandbox's upload uri as Meta's rupload does: success, {debug_info} for a wrong token, missing headers and an upload cut short (resumed from its offset)", async () => {
    const base = `${origin(graphServer)}/graph/v21.0`;
    const form = new URLSearchParams({
      media_type: "REELS",
      upload_type: "resumable",
      access_token: token(account.multipart),
    });
    const created = (await (
      await fetch(`${base}/${account.multipart}/media`, { method: "POST", body: form })
    ).json()) as { id: string; uri: string };
    expect(created.uri).toBe(`${origin(graphServer)}/graph/ig-api-upload/v21.0/${created.id}`);
    const bytes = readFileSync(path.join(SAMPLES, "reel-valid.mp4"));
    const send = (headers: Record<string, string>, body: Uint8Array = bytes) =>
      fetch(created.uri, { method: "POST", headers, body: Uint8Array.from(body) });

    const wrongToken = await send({ authorization: "OAuth not-a-token", offset: "0", file_size: String(bytes.length) });
    // Meta's documented body for a refused token (graph-reference.md, "Resumable upload"); its status is not documented.
    expect(wrongToken.status).toBe(400);
    expect(await wrongToken.json()).toEqual({
      debug_info: {
        retriable: false,
        type: "ProcessingFailedError",
        message: '{"success":false,"error":{"message":"unauthorized user request"}}',
      },
    });
    const noSize = await send({ authorization: `OAuth ${token(account.multipart)}`, offset: "0" });
    expect(noSize.status).toBe(400);
    expect((await noSize.json()).debug_info).toMatchObject({
      retriable: false,
      type: "ProcessingFailedError",
      message: expect.stringContaining("file_size"),
    });
    // Cut short: the bytes that arrived are kept, and the upload goes on from there.
    const half = Math.floor(bytes.length / 2);
    const oauth = { authorization: `OAuth ${token(account.multipart)}`, file_size: String(bytes.length) };
    const cut = await send({ ...oauth, offset: "0" }, bytes.subarray(0, half));
    expect((await cut.json()).debug_info).toMatchObject({
      retriable: true,
      message: expect.stringContaining(`resume with offset ${half}`),
    });
    expect(cut.headers.get("x-business-use-case-usage")).toContain(account.multipart);
    const wrongOffset = await send({ ...oauth, offset: "5" }, bytes.subarray(5));
    expect((await wrongOffset.json()).debug_info.message).toContain(`resume at offset ${half}`);
    const ok = await send({ ...oauth, offset: String(half) }, bytes.subarray(half));
    expect(await ok.json()).toEqual(UPLOAD_SUCCESS);
    expect(await (await send({ ...oauth, offset: "0" })).json()).toEqual(UPLOAD_SUCCESS);
    const status = await waitFor(
      async () => {
        const read = await (
          await fetch(`${base}/${created.id}?fields=status_code&access_token=${token(account.multipart)}`)
        ).json();
        return read.status_code === "IN_PROGRESS" ? undefined : read.status_code;
      },
      { what: "the uploaded container to be processed" },
    );
    expect(status).toBe("FINISHED");
  });
});

describe("preflight against a Graph URL that is not the sandbox", () => {
  it("refuses a 1 s video with Graph's code and a readable headline before any container is created", async () => {
    const answer = await create({ account_id: account.short, video_url: `${origin(files)}/ranges/reel-1s.mp4` });
    const p = await settled(answer.body.publication_id);
    expect(p.status).toBe("FAILED");
    expect(p.error).toMatchObject({
      code: REEL_SPEC_VIOLATION.code,
      subcode: REEL_SPEC_VIOLATION.subcode,
      classification: "fix-input",
    });
    expect(p.error?.headline).toBe("The video is 1 s long; reels must be 3 s to 15 min.");
    expect(p.container_id).toBeNull();
    expect(p.steps.map((s) => s.step)).toEqual(["queued", "failed"]);
    expect(callsOf(account.short, "media")).toHaveLength(0);
    expect(graphCalls.filter((c) => c.path.includes(account.short))).toEqual([]);
  });

  it("refuses an uploaded 1 s video the same way", async () => {
    const { upload_id } = await uploadFile(path.join(FIXTURES, "reel-1s.mp4"));
    const p = await settled((await create({ account_id: account.short, upload_id })).body.publication_id);
    expect(p.status).toBe("FAILED");
    expect(p.error?.headline).toBe("The video is 1 s long; reels must be 3 s to 15 min.");
    expect(callsOf(account.short, "media")).toHaveLength(0);
    // Kept a day for a retry, then it expires and the sweep takes the file.
    const ttl = await waitFor(
      async () => {
        const seconds = await redis.ttl(uploadKeys.upload(upload_id));
        return seconds > 0 && seconds <= ENDED_UPLOAD_TTL_S ? seconds : undefined;
      },
      { what: "the failed publication's upload to expire within a day" },
    );
    expect(ttl).toBeGreaterThan(ENDED_UPLOAD_TTL_S - 60);
  });

  it("keeps the warnings (moov at the end, 64 kHz audio) on the publication, which still publishes", async () => {
    const p = await settled(
      (await create({ account_id: account.warn, video_url: `${origin(files)}/ranges/reel-moov-at-end.mp4` })).body
        .publication_id,
    );
    expect(p.status).toBe("PUBLISHED");
    expect(p.warnings).toEqual([
      "the audio sample rate is 64000 Hz; Meta recommends at most 48 kHz",
      "the moov atom is after the media data; Meta recommends it at the front (ffmpeg -movflags +faststart)",
    ]);
    expect(p.steps.find((s) => s.step === "preflight")?.detail).toMatch(/moov at the end/);
  });

  it("reads a large file's head and its moov at the end by range requests, not the whole file", async () => {
    const size = statSync(largeMoovAtEnd).size;
    const before = fileRequests.length;
    const p = await settled(
      (await create({ account_id: account.large, video_url: `${origin(files)}/ranges/large-moov-at-end.mp4` })).body
        .publication_id,
    );
    // The sandbox refuses nothing here, but it does download the whole file itself; only the preflight's reads are ranged.
    const preflightReads = fileRequests.slice(before).filter((r) => r.range !== undefined);
    expect(preflightReads.length).toBeGreaterThanOrEqual(2);
    const read = preflightReads.reduce((sum, r) => sum + r.bytesSent, 0);
    expect(read).toBeLessThan(size / 4);
    expect(p.warnings).toContain(
      "the moov atom is after the media data; Meta recommends it at the front (ffmpeg -movflags +faststart)",
    );
  });

  it("falls back to a bounded download on a server that ignores Range, and still refuses the 1 s video", async () => {
    const before = fileRequests.length;
    const p = await settled(
      (await create({ account_id: account.plain, video_url: `${origin(files)}/plain/reel-1s.mp4` })).body
        .publication_id,
    );
    expect(p.status).toBe("FAILED");
    expect(p.error?.headline).toBe("The video is 1 s long; reels must be 3 s to 15 min.");
    expect(fileRequests.slice(before).map((r) => r.path)).toEqual(["/plain/reel-1s.mp4", "/plain/reel-1s.mp4"]);
    expect(callsOf(account.plain, "media")).toHaveLength(0);
  });
});
