/**
 * Next.js start-up hook: stamps every request with its socket's peer address, and resumes sandbox
 * processing that a previous web-server process left IN_PROGRESS.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  await stampPeerAddress();
  const { getSandboxDeps, sandboxEnabled } = await import("./lib/reels/sandbox/web-deps");
  const { resumeSandboxProcessing } = await import("./lib/reels/sandbox/resume-processing");
  const warn = (error: unknown) =>
    console.error(JSON.stringify({ time: new Date().toISOString(), level: "warn", component: "web", message: "sandbox resume failed", error: error instanceof Error ? error.message : String(error) }));
  // Not awaited: start-up does not wait on Redis, and a read of a stale container resumes it anyway.
  try {
    if (sandboxEnabled()) resumeSandboxProcessing(getSandboxDeps()).catch(warn);
  } catch (error) {
    warn(error);
  }
}

/**
 * Route handlers see no socket, and Next keeps an X-Forwarded-For a client sent. The sign-in
 * throttle needs an address a client cannot choose, so the server's request event sets
 * x-dispatch-peer (lib/auth.ts's PEER_HEADER) from the socket, over anything the client sent.
 */
async function stampPeerAddress(): Promise<void> {
  const http = await import("node:http");
  const { PEER_HEADER } = await import("./lib/auth");
  const prototype = http.Server.prototype as { emit: (event: string | symbol, ...args: unknown[]) => boolean; __dispatchPeer?: boolean };
  if (prototype.__dispatchPeer) return;
  prototype.__dispatchPeer = true;
  const emit = prototype.emit;
  prototype.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const request = args[0] as import("node:http").IncomingMessage;
      request.headers[PEER_HEADER] = request.socket?.remoteAddress ?? "";
    }
    return emit.call(this, event, ...args);
  };
}
