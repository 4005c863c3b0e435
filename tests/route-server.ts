import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

/**
 * Route modules (app/…/route.ts) served over real HTTP on a free local port, as Next calls them:
 * for clients that speak HTTP themselves (the official openai SDK). A client that goes away aborts
 * the Request's signal, as in Next, so streams release their subscriptions.
 */
type RouteHandler = (
  request: Request,
  context: { params: Promise<Record<string, string>> },
) => Response | Promise<Response>;
export type RouteModule = Record<string, unknown>;

export interface RouteServer {
  url: string;
  close(): Promise<void>;
}

/** `routes` maps a path pattern (`/v1/responses/[id]`) to its module. */
export async function serveRoutes(routes: Record<string, RouteModule>): Promise<RouteServer> {
  const table = Object.entries(routes).map(([pattern, module]) => ({
    segments: pattern.split("/").filter(Boolean),
    module,
  }));
  const server = createServer(
    (req, res) => void answer(table, req, res).catch((error: unknown) => res.destroy(error as Error)),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => close(server) };
}

function match(segments: string[], path: string[]): Record<string, string> | undefined {
  if (segments.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const name = /^\[(\w+)\]$/.exec(segment)?.[1];
    if (name) params[name] = decodeURIComponent(path[i]);
    else if (segment !== path[i]) return undefined;
  }
  return params;
}

async function answer(table: { segments: string[]; module: RouteModule }[], req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const path = url.pathname.split("/").filter(Boolean);
  const found = table.map((route) => ({ route, params: match(route.segments, path) })).find((r) => r.params);
  const handler = found?.route.module[req.method ?? "GET"] as RouteHandler | undefined;
  if (!found || !handler) return void res.writeHead(404).end();
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(url, {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([k, v]) =>
      v === undefined ? [] : [[k, String(v)] as [string, string]],
    ),
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    signal: abort.signal,
    duplex: "half",
  } as RequestInit);
  const response = await handler(request, { params: Promise.resolve(found.params!) });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  abort.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined));
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) res.write(chunk.value);
  } catch {
    // The client went away mid-body: nothing more to send.
  }
  res.end();
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
