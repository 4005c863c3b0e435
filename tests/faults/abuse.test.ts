import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobKeys } from "@/lib/jobs/keys";
import { publicationKeys } from "@/lib/reels/publication-record";
import { OPERATIONS } from "@/lib/openapi/operations";
import { BUILD_CANARY_SECRETS, CANARY_MARKER } from "../../scripts/lib/build";
import { ROOT, waitFor } from "../helpers";
import { findUncaught } from "../../scripts/lib/uncaught";
import { moovWithoutMvhd, moovWithoutTracks } from "../mp4-boxes";
import { chunkedRequest, onOneConnection, plainRequest } from "../raw-http";
import { startTestStack, submitJob, type TestStack } from "../stack";

/**
 * Abuse on the real stack: malformed requests on every public endpoint, one tenant against
 * another, and a look for secrets wherever a browser or a log reader could see them.
 */
const TOKENS = { acme: "EAAGacmeSECRETtoken000000000001", globex: "EAAGglobexSECRETtoken00000000002" };
let stack: TestStack;
let redis: Redis;

beforeAll(async () => {
  stack = await startTestStack("abuse", {
    REEL_ACCOUNTS: `acme:17841400000000101:${TOKENS.acme},globex:17841400000000202:${TOKENS.globex}`,
    RATE_LIMIT_PER_MINUTE: "0",
    SANDBOX_PROCESSING_MS: "100",
    REEL_POLL_INTERVAL_MS: "100",
  });
  redis = new Redis(stack.env.REDIS_URL!);
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

async function countKeys(pattern: string): Promise<number> {
  let cursor = "0";
  let count = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    count += keys.length;
  } while (cursor !== "0");
  return count;
}

/** A small seeded PRNG so a failing case can be replayed. */
function prng(seed: number) {
  return () => (seed = (seed * 48271) % 2147483647) / 2147483647;
}

describe("abuse", () => {
  it("2,000+ malformed requests on every endpoint: only 4xx in the documented shape, nothing created, still healthy", async () => {
    const random = prng(20261121);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    const validJob = { tenant_id: "acme", model_name: "local-ngram", prompt: "hi" };
    const validReel = { account_id: "17841400000000101", video_url: `${stack.url}/samples/reel-valid.mp4` };
    const corruptions: ((body: Record<string, unknown>) => BodyInit)[] = [
      (b) => JSON.stringify({ ...b, extra_field: true }),
      (b) => JSON.stringify(b).slice(0, Math.max(1, Math.floor(random() * JSON.stringify(b).length))),
      () => JSON.stringify(pick([null, 1, "text", [], [1, 2], true, {}])),
      (b) =>
        JSON.stringify(
          Object.fromEntries(
            Object.entries(b).map(([k, v]) => [k, typeof v === "string" ? pick([1, null, [], {}, true]) : "x"]),
          ),
        ),
      () => "",
      () => new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      () => "x".repeat(1024 * 1024 + 100),
      () => `{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`,
      (b) => JSON.stringify({ ...b, tenant_id: pick(["", "a b", "../etc", "x".repeat(200)]) }),
      (b) =>
        JSON.stringify({
          ...b,
          prompt: "",
          video_url: pick([
            "file:///etc/passwd",
            "ftp://x/y.mp4",
            "http://user:pw@example.com/a.mp4",
            "not a url",
            "javascript:alert(1)",
          ]),
        }),
    ];
    const badIds = [
      "..%2F..%2Fetc%2Fpasswd",
      "%00",
      "x".repeat(3000),
      "%F0%9F%92%A9",
      "null",
      "-1",
      "1%27%20OR%201%3D1",
      "00000000-0000-4000-8000-000000000000",
    ];
    const authHeaders = (): Record<string, string> =>
      pick<Record<string, string>>([
        { authorization: `Bearer ${stack.keys.acme}` },
        {},
        { authorization: "Bearer nope" },
        { authorization: `Basic ${stack.keys.acme}` },
        { authorization: `Bearer ${stack.keys.acme}` },
      ]);
    const contentType = () =>
      pick([
        "application/json",
        "text/plain",
        "application/xml",
        "multipart/form-data; boundary=x",
        "",
        "application/json; charset=utf-8",
      ]);

    type Case = { method: string; path: string; headers: Record<string, string>; body?: BodyInit };
    const makers: (() => Case)[] = [
      () => ({
        method: "POST",
        path: "/v1/jobs",
        headers: { ...authHeaders(), "content-type": contentType() },
        body: pick(corruptions)(validJob),
      }),
      () => ({
        method: "POST",
        path: "/api/reels",
        headers: { ...authHeaders(), "content-type": contentType() },
        body: pick(corruptions)(validReel),
      }),
      () => ({
        method: "POST",
        path: "/api/session",
        headers: { "content-type": contentType() },
        body: pick(corruptions)({ api_key: "wrong-key-000000000000" }),
      }),
      () => ({ method: "GET", path: `/jobs/${pick(badIds)}`, headers: authHeaders() }),
      () => ({ method: "GET", path: `/v1/jobs/${pick(badIds)}`, headers: authHeaders() }),
      () => ({
        method: "GET",
        path: `/jobs/${pick(badIds)}/stream?after=${pick(["-1", "abc", "1e99", ""])}`,
        headers: authHeaders(),
      }),
      () => ({ method: "POST", path: `/jobs/${pick(badIds)}/cancel`, headers: authHeaders() }),
      () => ({
        method: "GET",
        path: `/v1/jobs?${pick(["limit=0", "limit=1000000", "cursor=abc", "limit=-5", "foo=bar", "limit=1.5"])}`,
        headers: authHeaders(),
      }),
      () => ({ method: "GET", path: `/api/reels/${pick(badIds)}`, headers: authHeaders() }),
      () => ({ method: "POST", path: `/api/reels/${pick(badIds)}/resume`, headers: authHeaders() }),
      () => ({ method: "GET", path: `/api/reels?${pick(["limit=0", "cursor=zz", "x=1"])}`, headers: authHeaders() }),
      () => ({ method: "GET", path: `/v1/${pick(["nope", "jobs/x/y/z", "..%2Fadmin"])}`, headers: authHeaders() }),
      () => ({
        method: "GET",
        path: pick(["/v1/models", "/api/accounts", "/api/reels", "/v1/jobs"]),
        headers: pick<Record<string, string>>([{}, { authorization: "Bearer wrong" }]),
      }),
      () => ({
        method: "GET",
        path: `/v1/jobs/${pick(badIds)}`,
        headers: { ...authHeaders(), "x-padding": "a".repeat(20_000 + Math.floor(random() * 40_000)) },
      }),
    ];

    const jobsBefore = await countKeys(jobKeys.state("*"));
    const reelsBefore = await countKeys(publicationKeys.state("*"));
    const bad: string[] = [];
    const statuses = new Map<number, number>();
    const N = 2100;
    let sent = 0;
    const worker = async () => {
      while (sent < N) {
        sent++;
        const c = pick(makers)();
        const headers = Object.fromEntries(Object.entries(c.headers).filter(([, v]) => v !== ""));
        let response: Response;
        try {
          response = await fetch(`${stack.url}${c.path}`, { method: c.method, headers, body: c.body });
        } catch (error) {
          bad.push(`${c.method} ${c.path.slice(0, 80)}: ${String(error)}`);
          continue;
        }
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const text = await response.text();
        const describe = `${c.method} ${c.path.slice(0, 80)} → ${response.status} ${text.slice(0, 120)}`;
        if (response.status < 400 || response.status >= 500) bad.push(describe);
        else if (response.status !== 431) {
          // 431 comes from Node's HTTP parser before any handler runs: no body of ours.
          const problem = (() => {
            try {
              return JSON.parse(text);
            } catch {
              return undefined;
            }
          })();
          // The OpenAI-compatible surface documents OpenAI's error shape; the rest of the API, problem+json.
          const openAI = /^\/v1\/(models|responses)(\/|\?|$)/.test(c.path);
          const ok = openAI
            ? response.headers.get("content-type") === "application/json" &&
              problem?.error?.message &&
              problem.error.type &&
              "param" in problem.error &&
              "code" in problem.error
            : response.headers.get("content-type") === "application/problem+json" &&
              problem &&
              problem.status === response.status &&
              problem.title &&
              problem.detail &&
              problem.type;
          if (!ok) bad.push(describe);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(bad.slice(0, 10)).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(2000);
    expect([...statuses.keys()].every((s) => s >= 400 && s < 500)).toBe(true);
    expect(await countKeys(jobKeys.state("*"))).toBe(jobsBefore);
    expect(await countKeys(publicationKeys.state("*"))).toBe(reelsBefore);
    const health = await fetch(`${stack.url}/api/health`);
    expect(health.status).toBe(200);
  });

  it("fuzzes /api/uploads (raw, multipart, chunked, malformed MP4s) and the Host header: no 5xx, no error or uncaught exception logged", async () => {
    const random = prng(20261125);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    const logFrom = stack.logs().length;
    const valid = readFileSync(path.join(ROOT, "public/samples/reel-valid.mp4"));
    const hugeMoov = Buffer.concat([
      moovWithoutMvhd.subarray(0, 32),
      Buffer.from([0x0f, 0xa0, 0x00, 0x00]),
      Buffer.from("moov"),
      Buffer.alloc(4096),
    ]);
    const videos: Buffer[] = [
      valid,
      valid.subarray(0, 2000),
      valid.subarray(0, Math.floor(valid.length / 2)),
      moovWithoutMvhd,
      moovWithoutTracks(),
      hugeMoov,
      Buffer.alloc(0),
      Buffer.from("<html>not a video</html>"),
      Buffer.from(Array.from({ length: 3000 }, () => Math.floor(random() * 256))),
    ];
    const boundary = () =>
      pick([
        "----WebKitFormBoundaryAbCdEfGh12345678",
        "x",
        "----formdata-undici-012345",
        "Quoted Boundary",
        "a".repeat(70),
      ]);
    const multipart = (b: string, file: Buffer) => {
      const field = pick([
        "",
        `--${b}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${"n".repeat(Math.floor(random() * 100_000))}\r\n`,
      ]);
      const part = pick([
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="reel.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
        `--${b}\r\nContent-Disposition: form-data; name="file"\r\n\r\n`,
        `--${b}\r\n${"X-Long: y\r\n".repeat(2000)}\r\n`,
      ]);
      return Buffer.concat([
        Buffer.from(field + part),
        file,
        Buffer.from(pick([`\r\n--${b}--\r\n`, "", `\r\n--${b}`])),
      ]);
    };
    /** Sent as is, or chunked (no Content-Length) in pieces of random sizes. */
    const body = (bytes: Buffer): BodyInit => {
      if (random() < 0.5) return new Uint8Array(bytes);
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < bytes.length;) pieces.push(bytes.subarray(at, (at += 1 + Math.floor(random() * 65_536))));
      return new ReadableStream<Uint8Array>({
        pull: (c) => void (pieces.length ? c.enqueue(pieces.shift()) : c.close()),
      });
    };
    const upload = (): { headers: Record<string, string>; body: BodyInit } => {
      const file = pick(videos);
      if (random() < 0.5)
        return {
          headers: {
            "content-type": pick([
              "video/mp4",
              "video/quicktime",
              "VIDEO/MP4",
              "text/plain",
              "video/mp4; codecs=avc1",
              "",
            ]),
          },
          body: body(file),
        };
      const b = boundary();
      const type = pick([
        `multipart/form-data; boundary=${b}`,
        `multipart/form-data; boundary="${b}"`,
        "multipart/form-data",
        `Multipart/Form-Data; BOUNDARY=${b}`,
      ]);
      return { headers: { "content-type": type }, body: body(multipart(b, file)) };
    };
    const bad: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    const N = 300;
    const send = (c: { headers: Record<string, string>; body: BodyInit }) => {
      const headers = Object.fromEntries(
        Object.entries({ authorization: `Bearer ${stack.keys.acme}`, ...c.headers }).filter(([, v]) => v !== ""),
      );
      return fetch(`${stack.url}/api/uploads`, {
        method: "POST",
        headers,
        body: c.body,
        duplex: "half",
      } as RequestInit).catch((error: unknown) => error as Error);
    };
    // undici says only "fetch failed"; the cause says how (a reset, a closed socket, a timeout).
    const failure = (c: { headers: Record<string, string> }, error: Error) => {
      const cause = error.cause as { code?: string; message?: string } | undefined;
      return `upload ${JSON.stringify(c.headers)}: ${String(error)} (${cause?.code ?? ""} ${cause?.message ?? ""})`;
    };
    const worker = async () => {
      while (sent < N) {
        sent++;
        const c = upload();
        const response = await send(c);
        if (response instanceof Error) {
          bad.push(failure(c, response));
          continue;
        }
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const text = await response.text();
        if (
          response.status >= 500 ||
          (response.status >= 400 && response.headers.get("content-type") !== "application/problem+json")
        )
          bad.push(`upload ${JSON.stringify(c.headers)} → ${response.status} ${text.slice(0, 160)}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));

    const hosts = [
      "a b",
      "[",
      "example.com:99999",
      "evil.example/path",
      "user@host",
      "%zz",
      "",
      "\u00e9xample.com",
      "[::1",
      "127.0.0.1:0",
      "h".repeat(300),
    ];
    for (const host of hosts) {
      for (const [method, pathname] of [
        ["DELETE", "/api/session"],
        ["GET", "/api/health"],
        ["POST", "/api/uploads"],
        ["GET", "/graph/v21.0/me"],
        ["GET", "/sign-in"],
      ]) {
        const answer = await rawRequest(method, pathname, {
          host,
          "x-forwarded-host": pick([host, "ok.example", "a b, ok.example"]),
        });
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500 || answer.status === 0)
          bad.push(
            `${method} ${pathname} with Host ${JSON.stringify(host)} → ${answer.status} ${answer.body.slice(0, 160)}`,
          );
      }
    }
    expect(bad.slice(0, 10)).toEqual([]);
    expect(statuses.get(201) ?? 0).toBeGreaterThan(0);
    const log = stack.logs().slice(logFrom);
    expect(findUncaught(log)).toEqual([]);
    expect(
      log
        .split("\n")
        .filter((line) => /"level":"error"|"level":50/.test(line))
        .slice(0, 3),
    ).toEqual([]);
    expect((await fetch(`${stack.url}/api/health`)).status).toBe(200);
  });

  it("every route of the OpenAPI document: a chunked body over 1 MiB leaves the connection serving the next request, and JSON nested past 64 levels is a 400", async () => {
    const host = new URL(stack.url).host;
    const headers = { host, authorization: `Bearer ${stack.keys.acme}`, "content-type": "application/json" };
    // Ids nobody holds: a DELETE must not take a tenant's account from the tests after this one.
    const ids: Record<string, string> = { account_id: "17841499999999998", delivery_id: "dlv_0000000000000000" };
    const pathOf = (path: string) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? "00000000-0000-4000-8000-000000000000");
    // Not ready is a 503 by design; every other answer to these is the client's fault.
    const serverFault = (path: string, status: number) =>
      status >= 500 && !(path === "/api/health/ready" && status === 503);
    const bad: string[] = [];
    const logFrom = stack.logs().length;
    const tooLarge = Buffer.alloc(1.3 * 1024 * 1024, "{");
    const deep = `{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    expect(OPERATIONS.length).toBeGreaterThan(40);
    for (const operation of OPERATIONS) {
      const method = operation.method.toUpperCase();
      const path = pathOf(operation.path);
      const what = `${method} ${operation.path}`;
      const outcome = await onOneConnection(stack.url, [
        chunkedRequest(method, path, headers, tooLarge),
        plainRequest("GET", "/api/health/live", { host }),
      ]);
      const [first, second] = outcome.answers;
      if (outcome.timedOut) bad.push(`${what}: the connection went silent after ${outcome.answers.length} answer(s)`);
      else if (!first) bad.push(`${what}: closed without an answer`);
      else if (serverFault(operation.path, first.status)) bad.push(`${what} (chunked, over 1 MiB) → ${first.status}`);
      else if (!second && !(first.headers.connection === "close" && outcome.closed))
        bad.push(`${what}: closed after ${first.status} without saying so`);
      else if (second && second.status !== 200) bad.push(`${what}: the next request got ${second.status}`);

      const response = await fetch(`${stack.url}${path}`, {
        method,
        headers,
        body: method === "GET" ? undefined : deep,
        redirect: "manual",
      });
      const text = await response.text();
      if (operation.body && method !== "GET") {
        const openAI = operation.tag === "Responses";
        const shaped = openAI
          ? response.headers.get("content-type") === "application/json" &&
            JSON.parse(text).error?.type === "invalid_request_error"
          : response.headers.get("content-type") === "application/problem+json" &&
            JSON.parse(text).type === "/problems/bad-json";
        if (response.status !== 400 || !shaped)
          bad.push(`${what} (nested 5,000 deep) → ${response.status} ${text.slice(0, 120)}`);
      } else if (serverFault(operation.path, response.status))
        bad.push(`${what} (nested 5,000 deep) → ${response.status} ${text.slice(0, 120)}`);
    }
    expect(bad).toEqual([]);
    const log = stack.logs().slice(logFrom);
    expect(findUncaught(log)).toEqual([]);
    expect(log).not.toMatch(/RangeError|Maximum call stack/);
  });

  it("keeps tenants apart: 404 for another tenant's things, 403 for submitting as them, their accounts unusable", async () => {
    const job = await (await submitJob(stack, "acme", { prompt: "acme's secret prompt", max_tokens: 3 })).json();
    const reelResponse = await stack.fetchAs("acme", "/api/reels", {
      method: "POST",
      body: JSON.stringify({ account_id: "17841400000000101", video_url: `${stack.url}/samples/reel-valid.mp4` }),
    });
    expect(reelResponse.status).toBe(202);
    const reel = await reelResponse.json();

    const asGlobex = (p: string, init?: RequestInit) => stack.fetchAs("globex", p, init);
    for (const [p, init] of [
      [`/jobs/${job.job_id}`],
      [`/v1/jobs/${job.job_id}`],
      [`/jobs/${job.job_id}/stream`],
      [`/jobs/${job.job_id}/cancel`, { method: "POST" }],
      [`/api/reels/${reel.publication_id}`],
      [`/api/reels/${reel.publication_id}/events`],
      [`/api/reels/${reel.publication_id}/resume`, { method: "POST" }],
      [`/api/accounts/17841400000000101/posts`],
    ] as [string, RequestInit?][]) {
      const response = await asGlobex(p, init);
      expect(response.status, p).toBe(404);
    }
    const list = await (await asGlobex("/v1/jobs")).json();
    expect(list.data.map((j: { job_id: string }) => j.job_id)).not.toContain(job.job_id);
    const reels = await (await asGlobex("/api/reels")).json();
    expect(reels.data.map((r: { publication_id: string }) => r.publication_id)).not.toContain(reel.publication_id);
    expect((await submitJob(stack, "globex", { tenant_id: "acme", prompt: "x" })).status).toBe(403);
    const useTheirAccount = await asGlobex("/api/reels", {
      method: "POST",
      body: JSON.stringify({ account_id: "17841400000000101", video_url: `${stack.url}/samples/reel-valid.mp4` }),
    });
    expect(useTheirAccount.status).toBe(404);
    // The sandbox itself: globex's token does not open acme's account (to that token, it does not exist: 100/33, as Meta answers).
    const graph = await fetch(`${stack.url}/graph/v21.0/17841400000000101/media?access_token=${TOKENS.globex}`);
    expect((await graph.json()).error).toMatchObject({ code: 100, error_subcode: 33, type: "GraphMethodException" });
    await waitFor(
      async () =>
        ["PUBLISHED", "FAILED"].includes(
          (await (await stack.fetchAs("acme", `/api/reels/${reel.publication_id}`)).json()).status,
        ),
      { timeoutMs: 60_000, what: "the reel to finish" },
    );
  });

  it("never shows a token or an API key in responses, pages, scripts or logs", async () => {
    const secrets = [...Object.values(TOKENS), ...Object.values(stack.keys)];
    const leaks: string[] = [];
    const check = (where: string, text: string) => {
      for (const s of secrets) if (text.includes(s)) leaks.push(`${where} contains ${s.slice(0, 6)}…`);
    };
    for (const p of ["/api/accounts", "/api/reels", "/v1/jobs", "/v1/models", "/api/health", "/api/system"])
      check(p, await (await stack.fetchAs("acme", p)).text());
    const reels = await (await stack.fetchAs("acme", "/api/reels")).json();
    for (const r of reels.data)
      check(
        `/api/reels/${r.publication_id}`,
        await (await stack.fetchAs("acme", `/api/reels/${r.publication_id}`)).text(),
      );

    const signIn = await fetch(`${stack.url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_key: stack.keys.acme }),
    });
    expect(signIn.status).toBeLessThan(300);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
    expect(signIn.headers.get("set-cookie")).toMatch(/HttpOnly/i);
    check("the session cookie", cookie);
    const scripts = new Set<string>();
    for (const p of ["/sign-in", "/dashboard/jobs", "/dashboard/reels", "/dashboard/system"]) {
      const html = await (await fetch(`${stack.url}${p}`, { headers: { cookie } })).text();
      check(p, html);
      for (const m of html.matchAll(/\/_next\/static\/[^"'\s)]+\.js/g)) scripts.add(m[0]);
    }
    expect(scripts.size).toBeGreaterThan(0);
    for (const s of scripts) check(s, await (await fetch(`${stack.url}${s}`)).text());
    // The stack's keys were made after the build, so they cannot be in it: the build ran with
    // canaries in place of every secret variable, and those are what a leak would put there.
    expect(existsSync(path.join(ROOT, CANARY_MARKER)), "the build ran with the canaries").toBe(true);
    secrets.push(...BUILD_CANARY_SECRETS);
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) =>
        statSync(path.join(dir, f)).isDirectory() ? walk(path.join(dir, f)) : [path.join(dir, f)],
      );
    const built = walk(path.join(ROOT, ".next/static"));
    expect(built.length).toBeGreaterThan(0);
    for (const file of built) check(file, readFileSync(file, "utf8"));
    check("the logs", stack.logs());
    expect(leaks).toEqual([]);
  });
});

/** A request with a Host fetch() would not send (or would fix); status 0 when the connection failed. */
function rawRequest(
  method: string,
  pathname: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const request = http.request(`${stack.url}${pathname}`, { method, headers, setHost: false }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", (error) => resolve({ status: 0, body: String(error) }));
    request.end();
  });
}
