import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPH_MALFORMED_PATH } from "@/app/graph/sandbox-host";
import { servedHostNames } from "@/lib/net/served-hosts";
import { DRAIN_MAX_BYTES } from "@/lib/web/unread-body";
import { readBody } from "@/lib/web/http";
import { guardRequests, PEER_HEADER } from "@/lib/web/request-guard";
import { chunkedRequest, onOneConnection, plainRequest } from "../raw-http";

/** A plain Node server, as `next start` runs one, with the guard installed the way instrumentation.ts does. */
let server: http.Server;
let url: string;
const seen: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  guardRequests({
    answers: [GRAPH_MALFORMED_PATH],
    servedHosts: () =>
      servedHostNames({ PUBLIC_URL: "https://dispatch.example", ALLOWED_HOSTS: ["example.com", "Dashboard.Example"] }),
  });
  server = http.createServer((request, response) => {
    seen.push(request.headers);
    if (request.url === "/refuse-early") return refuseEarly(request, response);
    if (request.url === "/let-go") return void letGo(request, response);
    response.end("handled");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the request guard", () => {
  it.each(["/jobs/%E0%A4%A", "/api/reels/%ZZ/events", "/v1/jobs/%"])(
    "answers %s with a 400 problem before the app sees it",
    async (path) => {
      const before = seen.length;
      const response = await fetch(`${url}${path}`, { method: "POST", body: "x" });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({ status: 400, type: "/problems/bad-request" });
      expect(seen.length).toBe(before);
    },
  );

  it("answers a malformed Graph path in Graph's shape", async () => {
    const response = await fetch(`${url}/graph/v21.0/%E0%A4%A`);
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe(100);
  });

  it.each([
    ["a space", { host: "a b" }],
    ["an open bracket", { host: "[" }],
    ["a port past 65535", { host: "example.com:99999" }],
    ["a path", { host: "example.com/admin" }],
    ["credentials", { host: "user@example.com" }],
    ["a malformed X-Forwarded-Host entry", { host: "example.com", "x-forwarded-host": "example.com, a b" }],
  ])("answers a Host with %s with a 400 problem before the app sees it", async (_name, headers) => {
    const before = seen.length;
    const { status, type, body } = await rawRequest("DELETE", "/api/session", headers);
    expect(status).toBe(400);
    expect(type).toBe("application/problem+json");
    expect(JSON.parse(body)).toMatchObject({
      status: 400,
      type: "/problems/bad-request",
      detail: "The Host header is malformed.",
    });
    expect(seen.length).toBe(before);
  });

  it("passes a well-formed Host on: a name, an address with a port, an IPv6 literal", async () => {
    for (const host of ["example.com", "127.0.0.1:3000", "[::1]:3000", "Dashboard.Example"]) {
      const { status, body } = await rawRequest("GET", "/api/session", {
        host,
        "x-forwarded-host": "proxy.example, other.example:8443",
      });
      expect([status, body], host).toEqual([200, "handled"]);
    }
  });

  it.each(["rebind.attacker.example:3300", "dispatch.example.attacker.example", "10.9.9.9:3000", "[fe80::1]:3000"])(
    "answers Host %s, which it does not serve, with 421 before the app sees it",
    async (host) => {
      const before = seen.length;
      const { status, type, body } = await rawRequest("GET", "/metrics", { host });
      expect([status, type]).toEqual([421, "application/problem+json"]);
      expect(JSON.parse(body)).toMatchObject({ status: 421, type: "/problems/misdirected" });
      const graph = await rawRequest("POST", "/graph/_sandbox/accounts", { host });
      expect(graph.status).toBe(421);
      expect(JSON.parse(graph.body).error.code).toBe(100);
      expect(seen.length).toBe(before);
    },
  );

  it("serves PUBLIC_URL's host, ALLOWED_HOSTS, the loopback names and the address the connection came to", async () => {
    const port = new URL(url).port;
    for (const host of [
      "dispatch.example",
      "DISPATCH.example:443",
      "dashboard.example",
      `localhost:${port}`,
      "localhost.",
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
    ]) {
      const { status, body } = await rawRequest("GET", "/metrics", { host });
      expect([status, body], host).toEqual([200, "handled"]);
    }
  });

  it("keeps a connection whose body the app refused half-read: the next request on it is answered", async () => {
    const outcome = await onOneConnection(url, [
      chunkedRequest("POST", "/refuse-early", { host: "127.0.0.1" }, Buffer.alloc(1.3 * 1024 * 1024, "a")),
      plainRequest("GET", "/after", { host: "127.0.0.1" }),
    ]);
    expect(outcome.timedOut, `silent after ${outcome.answers.length} answer(s)`).toBe(false);
    expect(outcome.answers.map((a) => a.status)).toEqual([413, 200]);
    expect(outcome.answers[1].body).toBe("handled");
  });

  it("closes, saying so, a connection whose body the app destroyed half-read (as Next does at the limit)", async () => {
    const outcome = await onOneConnection(url, [
      chunkedRequest("POST", "/let-go", { host: "127.0.0.1" }, Buffer.alloc(1.3 * 1024 * 1024, "a")),
      plainRequest("GET", "/after", { host: "127.0.0.1" }),
    ]);
    expect(outcome.timedOut, `silent after ${outcome.answers.length} answer(s)`).toBe(false);
    expect(outcome.answers.map((a) => a.status)).toEqual([413]);
    expect(outcome.answers[0].headers.connection).toBe("close");
    expect(outcome.closed).toBe(true);
  });

  it("closes, rather than drains, a connection whose refused body goes on past the bound", async () => {
    const outcome = await onOneConnection(url, [
      chunkedRequest(
        "POST",
        "/refuse-early",
        { host: "127.0.0.1" },
        Buffer.alloc(DRAIN_MAX_BYTES + 2 * 1024 * 1024, "a"),
      ),
      plainRequest("GET", "/after", { host: "127.0.0.1" }),
    ]);
    expect(outcome.timedOut).toBe(false);
    expect(outcome.closed).toBe(true);
    expect(outcome.answers.length).toBeLessThan(2);
  });

  it("passes well-formed paths on, stamped with the socket's address over anything the client sent", async () => {
    const response = await fetch(`${url}/jobs/%41bc?after=%E0`, { headers: { [PEER_HEADER]: "203.0.113.9" } });
    expect(await response.text()).toBe("handled");
    expect(seen.at(-1)![PEER_HEADER]).toBe("127.0.0.1");
  });
});

/**
 * What Next does with a body it began to read for a route that then refused it: reads the first
 * chunk, stops (the stream paused, its listener left behind), answers 413.
 */
function refuseEarly(request: http.IncomingMessage, response: http.ServerResponse): void {
  request.on("data", () => {
    request.pause();
    if (!response.headersSent) response.writeHead(413).end("too large");
  });
}

/**
 * What a route under Next does at the limit: the body is the request as a web stream (Next hands
 * undici's Request the IncomingMessage), readBody reads it to the limit and cancels it, then 413.
 */
async function letGo(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const web = new Request("http://127.0.0.1/", {
    method: "POST",
    body: request as unknown as ReadableStream,
    duplex: "half",
  } as RequestInit);
  await readBody(web).catch(() => undefined);
  response.writeHead(413).end("too large");
}

/** A request with headers fetch() would not send as given (Host above all). */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${path}`, { method, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, type: response.headers["content-type"], body }),
      );
    });
    request.on("error", reject);
    request.end();
  });
}
