import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startRedis, type RedisServer } from "../../scripts/lib/redis-server";
import { PEER_HEADER } from "@/lib/web/auth";
import { chunkedBody, expectProblem, expectUnavailable, waitFor } from "../helpers";

/**
 * Review findings on the web side (issue 10), through the route handlers with real Requests, a
 * Redis of this file's own (so it can be stopped) and the suite's broker. No worker runs here.
 */
const ACME = "acme-key-0123456789abcdef";
const GLOBEX = "globex-key-0123456789abcdef";
const REDIS_DIR = ".test-data/web-hardening-redis";
let redisServer: RedisServer;
let routes: {
  jobs: typeof import("@/app/v1/jobs/route");
  reels: typeof import("@/app/api/reels/route");
  cancel: typeof import("@/app/jobs/[id]/cancel/route");
  stream: typeof import("@/app/jobs/[id]/stream/route");
  session: typeof import("@/app/api/session/route");
  floor: typeof import("@/app/api/bench/floor/route");
  graph: typeof import("@/app/graph/[...path]/route");
};

beforeAll(async () => {
  rmSync(REDIS_DIR, { recursive: true, force: true });
  redisServer = await startRedis({ dir: REDIS_DIR });
  Object.assign(process.env, {
    REDIS_URL: redisServer.url,
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `acme:${ACME},globex:${GLOBEX}`,
    DATA_DIR: ".test-data/web-hardening",
    RATE_LIMIT_PER_MINUTE: "0",
    MAX_STREAMS_PER_TENANT: "3",
  });
  routes = {
    jobs: await import("@/app/v1/jobs/route"),
    reels: await import("@/app/api/reels/route"),
    cancel: await import("@/app/jobs/[id]/cancel/route"),
    stream: await import("@/app/jobs/[id]/stream/route"),
    session: await import("@/app/api/session/route"),
    floor: await import("@/app/api/bench/floor/route"),
    graph: await import("@/app/graph/[...path]/route"),
  };
});

afterAll(async () => {
  const { getServices } = await import("@/lib/web/services");
  const services = getServices();
  await (await services.producer()).disconnect().catch(() => {});
  services.redis.disconnect();
  await redisServer?.stop();
});

const bearer = (key = ACME) => ({ authorization: `Bearer ${key}` });
const params = <T>(value: T) => ({ params: Promise.resolve(value) });
const submit = (prompt: string) =>
  routes.jobs.POST(
    new Request("http://dispatch.test/v1/jobs", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: "acme", model_name: "local-ngram", prompt }),
    }),
    undefined,
  );

describe("request bodies", () => {
  const MiB = 1024 * 1024;

  it("the Graph sandbox stops reading a chunked 64 MiB body at the 1 MiB limit and answers 413", async () => {
    const { body, pulled } = chunkedBody(64 * MiB);
    const request = new Request("http://127.0.0.1:3000/graph/v21.0/1784140000000000001/media", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      duplex: "half",
    } as RequestInit);
    const response = await routes.graph.POST(request);
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe(100);
    expect(pulled()).toBeLessThan(2 * MiB);
  });

  it("POST /v1/jobs refuses a chunked body as soon as it crosses 1 MiB", async () => {
    const { body, pulled } = chunkedBody(64 * MiB);
    const request = new Request("http://dispatch.test/v1/jobs", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    await expectProblem(await routes.jobs.POST(request, undefined), 413);
    expect(pulled()).toBeLessThan(2 * MiB);
  });

  it("the benchmark floor route is an unknown path unless the server was started with BENCH_FLOOR_ROUTE=1", async () => {
    const { body, pulled } = chunkedBody(64 * MiB);
    await expectProblem(await routes.floor.GET(), 404);
    await expectProblem(
      await routes.floor.POST(
        new Request("http://dispatch.test/api/bench/floor", { method: "POST", body, duplex: "half" } as RequestInit),
      ),
      404,
    );
    expect(pulled()).toBeLessThan(2 * MiB);
  });
});

describe("pages of the lists", () => {
  it("12 parallel submits paged with limit=1 come back all, each once; a made-up cursor is a 422", async () => {
    const ids = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => (await (await submit(`page ${i}`)).json()).job_id as string),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const url: string = `http://dispatch.test/v1/jobs?limit=1${cursor ? `&cursor=${cursor}` : ""}`;
      const body = await (await routes.jobs.GET(new Request(url, { headers: bearer() }), undefined)).json();
      seen.push(...body.data.map((j: { job_id: string }) => j.job_id));
      expect(body.running).toBeDefined();
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    expect(seen.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    expect(new Set(seen).size).toBe(seen.length);
    for (const bad of ["1700000000000", "abc", "MTcwMDAwMDAwMDAwMA", "%%%"]) {
      const problem = await expectProblem(
        await routes.jobs.GET(
          new Request(`http://dispatch.test/v1/jobs?cursor=${bad}`, { headers: bearer() }),
          undefined,
        ),
        422,
      );
      expect(problem.errors?.[0]?.path).toBe("cursor");
    }
    await expectProblem(
      await routes.reels.GET(
        new Request("http://dispatch.test/api/reels?cursor=1700000000000", { headers: bearer() }),
        undefined,
      ),
      422,
    );
  });
});

describe("streams", () => {
  it("a stream of a finished job closes at once for a client that has seen its final message", async () => {
    const { job_id } = await (await submit("to be cancelled")).json();
    await routes.cancel.POST(
      new Request(`http://dispatch.test/jobs/${job_id}/cancel`, { method: "POST", headers: bearer() }),
      params({ id: job_id }),
    );
    const full = await (
      await routes.stream.GET(
        new Request(`http://dispatch.test/jobs/${job_id}/stream`, { headers: bearer() }),
        params({ id: job_id }),
      )
    ).text();
    const finalSeq = Number([...full.matchAll(/^id: (\d+)$/gm)].at(-1)![1]);
    for (const headers of [{ "last-event-id": String(finalSeq) }, { "last-event-id": String(finalSeq + 5) }]) {
      const response = await routes.stream.GET(
        new Request(`http://dispatch.test/jobs/${job_id}/stream`, { headers: { ...bearer(), ...headers } }),
        params({ id: job_id }),
      );
      const text = await Promise.race([
        response.text(),
        new Promise<string>((_, reject) => setTimeout(() => reject(new Error("the stream stayed open")), 2000)),
      ]);
      expect(text).not.toContain("event: delta");
    }
  });

  it("refuses a tenant's stream past MAX_STREAMS_PER_TENANT with 429 and Retry-After, and not another tenant's", async () => {
    const { job_id } = await (await submit("kept open")).json();
    const clients = Array.from({ length: 3 }, () => new AbortController());
    const open = (signal: AbortSignal, key = ACME) =>
      routes.stream.GET(
        new Request(`http://dispatch.test/jobs/${job_id}/stream`, { headers: bearer(key), signal }),
        params({ id: job_id }),
      );
    const responses = await Promise.all(clients.map((c) => open(c.signal)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const refused = await open(new AbortController().signal);
    await expectProblem(refused, 429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    clients[0].abort();
    await responses[0].body!.cancel();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = new AbortController();
    expect((await open(again.signal)).status).toBe(200);
    for (const c of [...clients, again]) c.abort();
  });
});

describe("dashboard sessions", () => {
  const signIn = (key: string, headers: Record<string, string> = {}, url = "http://127.0.0.1:3000/api/session") =>
    routes.session.POST(
      new Request(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ api_key: key }),
      }),
      undefined,
    );
  const cookieOf = (response: Response) => response.headers.get("set-cookie")!.split(";")[0];

  it("signing out revokes the session server-side: the same cookie no longer works", async () => {
    const response = await signIn(ACME);
    expect(response.status).toBe(200);
    const cookie = cookieOf(response);
    const whoami = () =>
      routes.session.GET(new Request("http://127.0.0.1:3000/api/session", { headers: { cookie } }), undefined);
    expect((await whoami()).status).toBe(200);
    const out = await routes.session.DELETE(
      new Request("http://127.0.0.1:3000/api/session", {
        method: "DELETE",
        headers: { cookie, "sec-fetch-site": "same-origin" },
      }),
      undefined,
    );
    expect(out.status).toBe(204);
    await expectProblem(await whoami(), 401);
  });

  it("sets Secure on the cookie unless the dashboard is plain http on localhost", async () => {
    expect((await signIn(ACME)).headers.get("set-cookie")).not.toMatch(/;\s*Secure/i);
    expect((await signIn(ACME, {}, "http://dispatch.example/api/session")).headers.get("set-cookie")).toMatch(
      /;\s*Secure/i,
    );
    expect((await signIn(ACME, { "x-forwarded-proto": "https" })).headers.get("set-cookie")).toMatch(/;\s*Secure/i);
  });

  it("refuses a cross-site POST carrying the cookie (403), and a cross-site sign-in", async () => {
    const cookie = cookieOf(await signIn(ACME));
    const { job_id } = await (await submit("not to be cancelled")).json();
    const cancel = (headers: Record<string, string>) =>
      routes.cancel.POST(
        new Request(`http://127.0.0.1:3000/jobs/${job_id}/cancel`, { method: "POST", headers }),
        params({ id: job_id }),
      );
    await expectProblem(await cancel({ cookie, origin: "https://evil.example", "sec-fetch-site": "cross-site" }), 403);
    await expectProblem(await cancel({ cookie, origin: "https://evil.example" }), 403);
    expect((await cancel({ ...bearer(), origin: "https://evil.example" })).status).toBe(200);
    await expectProblem(await signIn(ACME, { "sec-fetch-site": "cross-site" }), 403);
  });

  it("throttles failed sign-ins and key checks per client address with 429 and Retry-After, a right key included", async () => {
    const from = { [PEER_HEADER]: "203.0.113.50" };
    for (let i = 0; i < 10; i++) await expectProblem(await signIn("wrong-key-0123456789abcdef", from), 401);
    const throttled = await expectProblem(await signIn(ACME, from), 429);
    expect(throttled.detail).toMatch(/failed/);
    const list = await routes.jobs.GET(
      new Request("http://dispatch.test/v1/jobs", { headers: { ...bearer(), ...from } }),
      undefined,
    );
    await expectProblem(list, 429);
    expect(Number(list.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await signIn(ACME, { [PEER_HEADER]: "203.0.113.51" })).status).toBe(200);
  });

  it("a session cookie with a malformed percent-encoding is a 401, not a 500", async () => {
    const response = await routes.session.GET(
      new Request("http://127.0.0.1:3000/api/session", { headers: { cookie: "dispatch_session=%E0%A4%A" } }),
      undefined,
    );
    await expectProblem(response, 401);
  });
});

describe("Redis unreachable", () => {
  it("answers 503 problem+json with Retry-After within 2 s, and recovers by itself when Redis is back", async () => {
    const list = () => routes.jobs.GET(new Request("http://dispatch.test/v1/jobs", { headers: bearer() }), undefined);
    expect((await list()).status).toBe(200);
    const port = redisServer.port;
    await redisServer.stop();
    try {
      await expectUnavailable([list, () => submit("while Redis is away")]);
    } finally {
      redisServer = await startRedis({ dir: REDIS_DIR, port });
    }
    await waitFor(async () => (await list()).status === 200, { timeoutMs: 10_000, what: "the API to recover" });
  });
});
