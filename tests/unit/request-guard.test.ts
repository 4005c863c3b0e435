import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPH_MALFORMED_PATH } from "@/app/graph/sandbox-host";
import { guardRequests, PEER_HEADER } from "@/lib/web/request-guard";

/** A plain Node server, as `next start` runs one, with the guard installed the way instrumentation.ts does. */
let server: http.Server;
let url: string;
const seen: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  guardRequests([GRAPH_MALFORMED_PATH]);
  server = http.createServer((request, response) => {
    seen.push(request.headers);
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

  it("passes well-formed paths on, stamped with the socket's address over anything the client sent", async () => {
    const response = await fetch(`${url}/jobs/%41bc?after=%E0`, { headers: { [PEER_HEADER]: "203.0.113.9" } });
    expect(await response.text()).toBe("handled");
    expect(seen.at(-1)![PEER_HEADER]).toBe("127.0.0.1");
  });
});

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
