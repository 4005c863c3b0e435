import http from "node:http";
import type { AddressInfo } from "node:net";
import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicationKeys } from "../../lib/reels/publication-record";
import { waitFor } from "../helpers";
import { startTestStack, type TestStack } from "../stack";

/** The web server (which hosts the sandbox) killed and restarted in the middle of publications. */
const ACCOUNT = "17841400000000303";
const TOKEN = "EAAGfaultsSANDBOXtoken0000000003";
let stack: TestStack;
let redis: Redis;

/**
 * Between the worker and the sandbox. Creating a container takes the sandbox milliseconds, too
 * short to kill the web server in; with `holdCreates` the proxy holds container creations, so the
 * publication stays CREATING until the test kills the web server. A held request then fails as
 * one in flight to a killed server does: its connection drops.
 */
let holdCreates = false;
const held = new Set<http.ServerResponse>();
const graphProxy = http.createServer((req, res) => {
  const forward = () => {
    held.delete(res);
    const headers = { ...req.headers };
    delete headers.host;
    const upstream = http.request(`${stack.url}${req.url}`, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  };
  if (holdCreates && req.method === "POST" && /\/media$/.test(new URL(req.url ?? "/", "http://proxy").pathname))
    held.add(res);
  else forward();
});
const dropHeld = () => {
  for (const res of held) res.destroy();
  held.clear();
};

beforeAll(async () => {
  stack = await startTestStack("reels", {
    REEL_ACCOUNTS: `acme:${ACCOUNT}:${TOKEN}`,
    REEL_POLL_INTERVAL_MS: "300",
    REEL_POLL_ATTEMPTS: "200",
    SANDBOX_PROCESSING_MS: "3000",
  });
  redis = new Redis(stack.env.REDIS_URL!);
  await new Promise<void>((resolve) => graphProxy.listen(0, "127.0.0.1", resolve));
  // The worker reaches the sandbox through the proxy; the web server still serves it.
  await stack.workers[0].stop();
  stack.startWorker({ GRAPH_URL: `http://127.0.0.1:${(graphProxy.address() as AddressInfo).port}/graph` });
});

afterAll(async () => {
  redis?.disconnect();
  dropHeld();
  graphProxy.close();
  await stack?.stop();
});

const publication = async (id: string) => (await stack.fetchAs("acme", `/api/reels/${id}`)).json();

describe("reel publishing when the web server dies", () => {
  it.each(["CREATING", "PROCESSING", "PROCESSING"])(
    "ends PUBLISHED exactly once when the web server is killed while %s",
    async (when) => {
      const caption = `fault ${when} ${Date.now()}`;
      const created = await stack.fetchAs("acme", "/api/reels", {
        method: "POST",
        body: JSON.stringify({ account_id: ACCOUNT, video_url: `${stack.url}/samples/reel-valid.mp4`, caption }),
      });
      expect(created.status).toBe(202);
      const { publication_id } = await created.json();
      holdCreates = when === "CREATING";
      await waitFor(
        async () => {
          const p = await publication(publication_id);
          return when === "CREATING"
            ? p.status === "CREATING" && held.size > 0
            : p.status === "PROCESSING" && p.polls.length >= 1;
        },
        { timeoutMs: 60_000, intervalMs: 20, what: `the publication to be ${when}` },
      );

      await stack.web.kill("SIGKILL");
      // Read after the kill, from Redis: the server died while the publication was in this state.
      expect(await redis.hget(publicationKeys.state(publication_id), "status")).toBe(when);
      holdCreates = false;
      dropHeld();
      stack.web.restart();
      await waitFor(async () => (await fetch(`${stack.url}/api/health`).catch(() => undefined))?.ok, {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: "the web server back",
      });

      const final = await waitFor(
        async () => {
          const p = await publication(publication_id).catch(() => undefined);
          return p && ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(p.status) ? p : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250, what: "the publication to finish" },
      );
      expect(final.status).toBe("PUBLISHED");
      expect(final.post_id).toBeTruthy();
      const posts = await (
        await fetch(`${stack.url}/graph/v21.0/${ACCOUNT}/media?fields=id,caption&limit=100&access_token=${TOKEN}`)
      ).json();
      expect(posts.data.filter((p: { caption?: string }) => p.caption === caption)).toHaveLength(1);
    },
  );
});
