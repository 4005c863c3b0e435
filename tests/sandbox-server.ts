import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { handleGraphRequest, type SandboxDeps } from "@/lib/reels/sandbox";

export interface SandboxServer {
  /** The server's origin; the sandbox answers under `${url}/graph`. */
  url: string;
  close(): Promise<void>;
}

/**
 * The Graph sandbox over real HTTP on a free local port, as the web server mounts it, with the
 * peer address stamped as the request guard does (its control surface answers loopback callers).
 */
export async function serveSandbox(deps: SandboxDeps): Promise<SandboxServer> {
  let url = "";
  const server = createServer(
    (req, res) => void answer(deps, url, req, res).catch((error: unknown) => res.destroy(error as Error)),
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

async function answer(deps: SandboxDeps, origin: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
  headers.set("x-dispatch-peer", req.socket.remoteAddress ?? "");
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const response = await handleGraphRequest(
    new Request(new URL(req.url ?? "/", origin), {
      method: req.method,
      headers,
      body: hasBody ? Buffer.concat(chunks) : undefined,
    }),
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
  const server = createServer((req, res) => {
    const [, folder, name = ""] = new URL(req.url ?? "/", "http://x").pathname.split("/");
    const dir = folder === "samples" ? SAMPLES : folder === "fixtures" ? FIXTURES : undefined;
    if (!dir) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": name.endsWith(".jpg") ? "image/jpeg" : "video/mp4" });
    createReadStream(path.join(dir, path.basename(name)))
      .on("error", () => res.destroy())
      .pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
