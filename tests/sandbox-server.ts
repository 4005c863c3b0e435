import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { handleGraphRequest, type SandboxDeps } from "@/lib/graph/sandbox";
import { PEER_HEADER } from "@/lib/web/request-guard";

export interface SandboxServer {
  /** The server's origin; the sandbox answers under `${url}/graph`. */
  url: string;
  close(): Promise<void>;
}

/** A node:http server on a free loopback port. */
export function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

export const origin = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Closes servers from listen(), their kept-alive connections too; missing ones (a failed set-up) are skipped. */
export async function closeServers(...servers: (Server | undefined)[]): Promise<void> {
  for (const server of servers) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  }
}

/** What the sandbox was asked, for tests that count, time or inspect Graph calls. */
export interface SandboxCall {
  at: number;
  method: string;
  path: string;
  url: URL;
  /** As the client sent them (before the peer stamp). */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * A handler for listen() that serves the Graph sandbox as the web server mounts it, with the peer
 * address stamped as the request guard does (its control surface answers loopback callers). The
 * deps are read per request, so a test may build them after the server is listening.
 */
export function sandboxHandler(
  deps: () => SandboxDeps,
  onCall?: (call: SandboxCall) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => void answer(deps(), req, res, onCall).catch((error: unknown) => res.destroy(error as Error));
}

/** The Graph sandbox over real HTTP on a free local port; `onCall` sees every request first. */
export async function serveSandbox(deps: SandboxDeps, onCall?: (call: SandboxCall) => void): Promise<SandboxServer> {
  const server = await listen(sandboxHandler(() => deps, onCall));
  return { url: origin(server), close: () => closeServers(server) };
}

async function answer(
  deps: SandboxDeps,
  req: IncomingMessage,
  res: ServerResponse,
  onCall?: (call: SandboxCall) => void,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const url = new URL(req.url ?? "/", `http://127.0.0.1:${req.socket.localPort}`);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
  onCall?.({
    at: Date.now(),
    method: req.method ?? "",
    path: url.pathname,
    url,
    headers: Object.fromEntries(headers),
    body,
  });
  headers.set(PEER_HEADER, req.socket.remoteAddress ?? "");
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const response = await handleGraphRequest(
    new Request(url, { method: req.method, headers, body: hasBody ? body : undefined }),
    deps,
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const SAMPLES = path.resolve(__dirname, "../public/samples");
const FIXTURES = path.resolve(__dirname, "fixtures");

/**
 * The committed sample videos (`/samples/{file}`) and test fixtures (`/fixtures/{file}`, e.g. the
 * cover JPEG) over real HTTP on a free local port, for a sandbox to fetch.
 */
export async function serveSamples(): Promise<SandboxServer> {
  const server = await listen((req, res) => {
    const [, folder, name = ""] = new URL(req.url ?? "/", "http://x").pathname.split("/");
    const dir = folder === "samples" ? SAMPLES : folder === "fixtures" ? FIXTURES : undefined;
    if (!dir) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": name.endsWith(".jpg") ? "image/jpeg" : "video/mp4" });
    createReadStream(path.join(dir, path.basename(name)))
      .on("error", () => res.destroy())
      .pipe(res);
  });
  return { url: origin(server), close: () => closeServers(server) };
}
