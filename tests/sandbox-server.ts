import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { handleGraphRequest, type SandboxDeps } from "@/lib/reels/sandbox";

export interface SandboxServer {
  /** The server's origin; the sandbox answers under `${url}/graph`. */
  url: string;
  close(): Promise<void>;
}

export interface SandboxServerOptions {
  /** Sees every request's address before the sandbox answers it (a test counting calls). */
  onRequest?: (url: URL) => void;
}

/**
 * The Graph sandbox over real HTTP on a free local port, as the web server mounts it, with the
 * peer address stamped as the request guard does (its control surface answers loopback callers).
 */
export async function serveSandbox(deps: SandboxDeps, options: SandboxServerOptions = {}): Promise<SandboxServer> {
  let url = "";
  const server = createServer(
    (req, res) => void answer(deps, url, req, res, options).catch((error: unknown) => res.destroy(error as Error)),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function answer(
  deps: SandboxDeps,
  origin: string,
  req: IncomingMessage,
  res: ServerResponse,
  options: SandboxServerOptions,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
  headers.set("x-dispatch-peer", req.socket.remoteAddress ?? "");
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const url = new URL(req.url ?? "/", origin);
  options.onRequest?.(url);
  const response = await handleGraphRequest(
    new Request(url, {
      method: req.method,
      headers,
      body: hasBody ? Buffer.concat(chunks) : undefined,
    }),
    deps,
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}
