import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../scripts/lib/redis-server";
import { chunkedBody, expectProblem, expectUnavailable, waitFor } from "../helpers";
import { chunkedRequest, onOneConnection, plainRequest } from "../raw-http";
import { startTestStack, submitJob, type TestStack } from "../stack";

/**
 * The web server's review findings of issue 10 on the real stack (`next start`, workers, Redis,
 * the broker): headers, malformed input, bodies, sessions, streams, paging, and Redis going away.
 */
let stack: TestStack;
let restartedRedis: RedisServer | undefined;

beforeAll(async () => {
  stack = await startTestStack("web-hardening", { RATE_LIMIT_PER_MINUTE: "0", LOCAL_MODEL_TOKENS_PER_SECOND: "2000" });
});

afterAll(async () => {
  await stack?.stop();
  await restartedRedis?.stop();
});

const MiB = 1024 * 1024;

describe("what every response carries", () => {
  it("Content-Security-Policy with frame-ancestors 'none', nosniff and Referrer-Policy on pages, API answers and unknown paths", async () => {
    for (const path of ["/sign-in", "/api/health", "/v1/nope", "/no-such-page"]) {
      const response = await fetch(`${stack.url}${path}`);
      expect(response.headers.get("content-security-policy"), path).toMatch(/frame-ancestors 'none'/);
      expect(response.headers.get("content-security-policy"), path).toMatch(/object-src 'none'/);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(response.headers.get("referrer-policy"), path).toBe("strict-origin-when-cross-origin");
    }
  });
});

describe("malformed input", () => {
  it("a malformed percent-encoding in a path id or the session cookie is a 4xx problem, with no stack trace logged", async () => {
    const logBefore = stack.logs().length;
    for (const [method, path] of [
      ["GET", "/jobs/%E0%A4%A"],
      ["GET", "/v1/jobs/%E0%A4%A"],
      ["GET", "/jobs/%E0%A4%A/stream"],
      ["POST", "/jobs/%E0%A4%A/cancel"],
      ["GET", "/api/reels/%E0%A4%A"],
      ["GET", "/api/reels/%E0%A4%A/events"],
      ["POST", "/api/reels/%E0%A4%A/resume"],
      ["GET", "/api/accounts/%E0%A4%A/posts"],
      ["GET", "/v1/%E0%A4%A"],
    ]) {
      const response = await stack.fetchAs("acme", path, { method });
      expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
      expect(response.headers.get("content-type"), `${method} ${path}`).toBe("application/problem+json");
    }
    for (const path of ["/v1/jobs", "/api/session"]) {
      await expectProblem(
        await fetch(`${stack.url}${path}`, { headers: { cookie: "dispatch_session=%E0%A4%A" } }),
        401,
      );
    }
    const page = await fetch(`${stack.url}/dashboard/jobs`, {
      headers: { cookie: "dispatch_session=%E0%A4%A" },
      redirect: "manual",
    });
    expect(page.status).toBeLessThan(500);
    expect(stack.logs().slice(logBefore)).not.toMatch(/URIError|\n\s+at /);
  });
});

describe("request bodies", () => {
  it("the benchmark floor route does not exist in a server started without BENCH_FLOOR_ROUTE", async () => {
    await expectProblem(await fetch(`${stack.url}/api/bench/floor`), 404);
    await expectProblem(await fetch(`${stack.url}/api/bench/floor`, { method: "POST", body: "{}" }), 404);
  });

  it("the Graph sandbox answers a chunked 64 MiB body with 413 without holding it in memory", async () => {
    // Node discards what the client still sends after the answer, so what counts is the web server's peak memory.
    const peak = () =>
      Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${stack.web.child.pid}/status`, "utf8"))![1]) * 1024;
    const url = `${stack.url}/graph/v21.0/1784140000000000001/media`;
    // Warm up: the route's first call loads its code, which alone raises the peak.
    await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "caption=x",
    });
    const before = peak();
    const { body } = chunkedBody(64 * MiB);
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      duplex: "half",
    } as RequestInit).catch((error: Error) => error);
    // The server may also close the connection before the client finished sending.
    if (response instanceof Response) expect(response.status).toBe(413);
    expect(peak() - before).toBeLessThan(24 * MiB);
  });
});

describe("a refusal before the body was read (issue 46, item 1)", () => {
  it.each([
    ["POST", "/api/session", false],
    ["POST", "/v1/responses", true],
    ["POST", "/v1/jobs", true],
    ["POST", "/graph/v21.0/1784140000000000001/media", false],
    ["POST", "/graph/_sandbox/accounts", false],
  ])(
    "%s %s: a chunked body over the limit gets 413, and the next request on the connection its answer",
    async (method, path, withKey) => {
      const headers: Record<string, string> = {
        host: new URL(stack.url).host,
        "content-type": "application/json",
        ...(withKey ? { authorization: `Bearer ${stack.keys.acme}` } : {}),
      };
      const outcome = await onOneConnection(stack.url, [
        chunkedRequest(method, path, headers, Buffer.alloc(1.3 * MiB, "a")),
        plainRequest("GET", "/api/health/live", { host: headers.host }),
      ]);
      expect(outcome.timedOut, `the connection went silent after ${outcome.answers.length} answer(s)`).toBe(false);
      expect(outcome.answers[0]?.status).toBe(413);
      // Either the connection carries the next request, or the refusal said it would close and it did.
      if (outcome.answers.length < 2) {
        expect(outcome.answers[0].headers.connection).toBe("close");
        expect(outcome.closed).toBe(true);
      } else expect(outcome.answers[1].status).toBe(200);
    },
  );
});

describe("the loopback-only surfaces and web pages (issue 46, item 3)", () => {
  it("answers only the Host names it serves: a rebound name gets 421, the loopback names their answer", async () => {
    const port = new URL(stack.url).port;
    const status = async (host: string, path = "/metrics") =>
      (await onOneConnection(stack.url, [plainRequest("GET", path, { host })])).answers[0]?.status;
    expect(await status(`rebind.attacker.example:${port}`)).toBe(421);
    expect(await status(`rebind.attacker.example:${port}`, "/graph/v21.0/me")).toBe(421);
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status(`[::1]:${port}`)).toBe(200);
  });

  it("a page of another site can neither drive the sandbox's controls nor read /metrics", async () => {
    const created = await fetch(`${stack.url}/graph/_sandbox/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(created.status).toBe(201);
    const { account_id } = await created.json();
    const evil = { origin: "http://evil.example", "sec-fetch-site": "cross-site" };
    const faults = await fetch(`${stack.url}/graph/_sandbox/accounts/${account_id}/faults`, {
      method: "POST",
      headers: { "content-type": "text/plain", ...evil },
      body: JSON.stringify({ on: "media", code: 190, count: 5 }),
    });
    await expectProblem(faults, 403);
    await expectProblem(await fetch(`${stack.url}/metrics`, { headers: evil }), 403);
  });
});

describe("dashboard sessions", () => {
  const signIn = (key: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ api_key: key }),
    });

  it("a signed-out cookie stops working, and a cross-site POST with a live one is refused", async () => {
    const signedIn = await signIn(stack.keys.acme);
    expect(signedIn.status).toBe(200);
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0];
    const job = await (
      await submitJob(stack, "acme", { prompt: "not cancelled from elsewhere", max_tokens: 400 })
    ).json();
    await expectProblem(
      await fetch(`${stack.url}/jobs/${job.job_id}/cancel`, {
        method: "POST",
        headers: { cookie, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      }),
      403,
    );
    expect((await fetch(`${stack.url}/v1/jobs`, { headers: { cookie } })).status).toBe(200);
    const out = await fetch(`${stack.url}/api/session`, {
      method: "DELETE",
      headers: { cookie, "sec-fetch-site": "same-origin" },
    });
    expect(out.status).toBe(204);
    await expectProblem(await fetch(`${stack.url}/v1/jobs`, { headers: { cookie } }), 401);
    const page = await fetch(`${stack.url}/dashboard/jobs`, { headers: { cookie }, redirect: "manual" });
    expect(page.status).toBeGreaterThanOrEqual(300);
    expect(page.status).toBeLessThan(400);
  });

  it("throttles failed sign-ins from one client address (behind a local proxy) with 429 and Retry-After", async () => {
    const from = { "x-forwarded-for": "203.0.113.80" };
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await signIn(`wrong-key-${i}-0123456789abcdef`, from)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    const throttled = await signIn(stack.keys.acme, from);
    await expectProblem(throttled, 429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await signIn(stack.keys.acme)).status).toBe(200);
  });
});

describe("streams and lists", () => {
  it("a finished job's stream closes at once for a client that saw its final message (as EventSource reconnects)", async () => {
    const { job_id } = await (
      await submitJob(stack, "acme", { prompt: "The worker reads the log", max_tokens: 5 })
    ).json();
    const full = await (await stack.fetchAs("acme", `/jobs/${job_id}/stream`)).text();
    const finalSeq = [...full.matchAll(/^id: (\d+)$/gm)].at(-1)![1];
    const started = Date.now();
    const again = await stack.fetchAs("acme", `/jobs/${job_id}/stream`, {
      headers: { "last-event-id": finalSeq },
      signal: AbortSignal.timeout(10_000),
    });
    expect(await again.text()).not.toContain("event: delta");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("12 parallel submits paged with limit=1 list every job exactly once", async () => {
    const ids = await Promise.all(
      Array.from(
        { length: 12 },
        async (_, i) =>
          (await (await submitJob(stack, "globex", { prompt: `page ${i}`, max_tokens: 2 })).json()).job_id as string,
      ),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { job_id: string }[]; next_cursor: string | null } = await (
        await stack.fetchAs("globex", `/v1/jobs?limit=1${cursor ? `&cursor=${cursor}` : ""}`)
      ).json();
      seen.push(...page.data.map((j) => j.job_id));
      cursor = page.next_cursor;
    } while (cursor && seen.length < 100);
    expect(seen.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    expect(seen.length).toBe(new Set(seen).size);
  });
});

describe("Redis unreachable", () => {
  it("the API answers 503 with Retry-After within 2 s while Redis is down, and recovers by itself", async () => {
    expect((await stack.fetchAs("acme", "/v1/jobs")).status).toBe(200);
    await stack.redis!.kill();
    const port = stack.redis!.port;
    try {
      await expectUnavailable([
        () => stack.fetchAs("acme", "/v1/jobs"),
        () => submitJob(stack, "acme", { prompt: "while Redis is away" }),
        () => stack.fetchAs("acme", "/jobs/00000000-0000-4000-8000-000000000000"),
      ]);
    } finally {
      restartedRedis = await startRedis({ dir: `${stack.logFile.replace(/stack\.log$/, "")}redis`, port });
    }
    await waitFor(async () => (await stack.fetchAs("acme", "/v1/jobs")).status === 200, {
      timeoutMs: 20_000,
      what: "the API to recover",
    });
  });
});
