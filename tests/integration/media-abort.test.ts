import { randomInt } from "node:crypto";
import { createReadStream, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { createRedis, type Redis } from "@/lib/redis";
import { handleGraphRequest, settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { largeReel } from "../large-reel";
import { ROOT, waitFor } from "../helpers";

/**
 * Clients that leave a video mid-transfer, as a <video> does on every seek and every page it
 * leaves: the sandbox's media route must close its file and throw nothing, wherever the cancel
 * lands (before the first read, between reads, during one, with the socket full).
 */

const DATA_DIR = path.join(ROOT, ".test-data/media-abort");

let redis: Redis;
let deps: SandboxDeps;
let video: Buffer;
let mediaUrl: string;
let files: Server | undefined;
let media: Server | undefined;
const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => uncaught.push(error);

/** This process's descriptors open on the sandbox's kept videos. */
const openVideoFiles = () =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(DATA_DIR);
    } catch {
      return false;
    }
  }).length;
const withinRange = () => {
  const start = randomInt(0, video.length - 1);
  return { start, end: Math.min(video.length - 1, start + randomInt(1, 4 * 1024 * 1024)) };
};

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);
  await rm(DATA_DIR, { recursive: true, force: true });
  const videoFile = largeReel(ROOT);
  video = readFileSync(videoFile);
  files = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4" });
    createReadStream(videoFile)
      .on("error", () => res.destroy())
      .pipe(res);
  });
  const filesOrigin = await listen(files);

  redis = createRedis(inject("redisUrl"));
  const account = `1784${randomInt(1e9, 1e10)}`;
  const token = `abort-token-${account}`;
  const config = parseConfig({
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: "127.0.0.1:1",
    API_KEYS: "acme:acme-key-0123456789abcdef",
    REEL_ACCOUNTS: `acme:${account}:${token}`,
    SANDBOX_PROCESSING_MS: "50",
    ALLOW_PRIVATE_URLS: "true",
    DATA_DIR,
  });
  deps = { redis, config, log: () => {}, now: Date.now };
  const graph = async (method: string, pathAndQuery: string) =>
    (
      await handleGraphRequest(
        new Request(
          `http://sandbox.test/graph/v21.0/${pathAndQuery}${pathAndQuery.includes("?") ? "&" : "?"}access_token=${token}`,
          { method },
        ),
        deps,
      )
    ).json();

  const { id: containerId } = await graph(
    "POST",
    `${account}/media?media_type=REELS&video_url=${encodeURIComponent(`${filesOrigin}/large-reel.mp4`)}`,
  );
  await waitFor(async () => (await graph("GET", `${containerId}?fields=status_code`)).status_code !== "IN_PROGRESS", {
    timeoutMs: 60_000,
    what: "the large reel to be processed",
  });
  const published = await graph("POST", `${account}/media_publish?creation_id=${containerId}`);
  expect(published, JSON.stringify(published)).toEqual({ id: expect.stringMatching(/^\d{17}$/) });
  ({ media_url: mediaUrl } = await graph("GET", `${published.id}?fields=media_url`));
}, 120_000);

afterAll(async () => {
  process.off("uncaughtException", onUncaught);
  process.off("unhandledRejection", onUncaught);
  media?.closeAllConnections();
  files?.closeAllConnections();
  await Promise.all([media, files].map((server) => server && new Promise((resolve) => server.close(resolve))));
  if (deps) await settleSandboxProcessing(deps);
  await redis?.quit();
});

describe("the media route, left mid-transfer", () => {
  it("closes its file and throws nothing when the body is cancelled, at any point", async () => {
    for (let i = 0; i < 200; i++) {
      const { start, end } = withinRange();
      const response = await handleGraphRequest(
        new Request(mediaUrl, { headers: { range: `bytes=${start}-${end}` } }),
        deps,
      );
      expect(response.status).toBe(206);
      const reader = response.body!.getReader();
      const received: Uint8Array[] = [];
      for (let reads = i % 4; reads > 0; reads--) {
        const { done, value } = await reader.read();
        if (done) break;
        received.push(value);
      }
      // Every third cancel lands while a read is in flight.
      const pending = i % 3 === 0 ? reader.read().catch(() => undefined) : undefined;
      await reader.cancel(new Error("the client left"));
      await pending;
      const bytes = Buffer.concat(received);
      expect(bytes.equals(video.subarray(start, start + bytes.length))).toBe(true);
    }
    await waitFor(() => openVideoFiles() === 0, { timeoutMs: 5_000, what: "every file handle to be closed" });
    expect(uncaught).toEqual([]);
  });

  it(
    "over real sockets: 60 clients abort range requests mid-body while the server is held back",
    { timeout: 30_000 },
    async () => {
      // Served as Next.js serves a route handler's body (next/dist/server/pipe-readable.js): piped into
      // the socket with back-pressure, and the pipe aborted when the socket closes.
      media = createServer(async (req, res) => {
        const response = await handleGraphRequest(
          new Request(`http://sandbox.test${req.url}`, { headers: req.headers as Record<string, string> }),
          deps,
        );
        res.writeHead(response.status, Object.fromEntries(response.headers));
        const abort = new AbortController();
        res.once("close", () => abort.abort());
        const socket = new WritableStream<Uint8Array>({
          write: async (chunk) => {
            if (!res.write(chunk)) await drained(res);
          },
          abort: (error) => void res.destroy(error),
          close: () => void res.end(),
        });
        await response.body!.pipeTo(socket, { signal: abort.signal }).catch((error: Error) => {
          if (error.name !== "AbortError") onUncaught(error);
        });
      });
      const origin = await listen(media);
      const { pathname } = new URL(mediaUrl);
      await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const { start } = withinRange();
          const abort = new AbortController();
          const response = await fetch(`${origin}${pathname}`, {
            headers: { range: `bytes=${start}-` },
            signal: abort.signal,
          });
          expect(response.status).toBe(206);
          const reader = response.body!.getReader();
          for (let reads = i % 5; reads > 0; reads--) await reader.read();
          // Some stop reading for a while first, so the server fills the socket and waits for drain.
          if (i % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 50));
          abort.abort();
          await reader.read().catch(() => undefined);
        }),
      );
      await waitFor(() => openVideoFiles() === 0, { timeoutMs: 10_000, what: "every file handle to be closed" });
      expect(uncaught).toEqual([]);
    },
  );
});
