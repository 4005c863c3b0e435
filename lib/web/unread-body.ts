import type http from "node:http";

/** How much of a body the server reads and drops after answering before it, to keep the connection. */
export const DRAIN_MAX_BYTES = 4 * 1024 * 1024;
/** How long it waits for that rest to come. */
export const DRAIN_MAX_MS = 5_000;

/**
 * A route that refuses a body before reading all of it (413 past the limit, 401 before the body)
 * leaves the rest on the connection, and Next's answer said keep-alive: the next request on it was
 * never read, until Node reset it a minute later (issue 46: behind a proxy that reuses
 * connections, other people's requests hung). Node drains a body nobody touched; one the app began
 * to read is left to the app, which let it go in one of two ways:
 * - destroyed (Next cancels the body stream when readBody stops at the limit): nothing can read the
 *   rest any more, so the answer says `Connection: close` and Node closes after sending it;
 * - paused: the rest is read and dropped after the answer, as Node drains an untouched body, up to
 *   DRAIN_MAX_BYTES within DRAIN_MAX_MS, and past either the connection is closed. Reading rather
 *   than closing keeps the answer: a socket closed with unread bytes sends a reset, which some
 *   clients take before they read the answer.
 */
export function settleUnreadBody(request: http.IncomingMessage, response: http.ServerResponse): void {
  // Node drops request.socket once the request is destroyed; the connection is still this one.
  const socket = request.socket;
  const writeHead = response.writeHead;
  response.writeHead = function (this: http.ServerResponse, ...args: unknown[]) {
    if (request.destroyed && !request.complete) this.setHeader("connection", "close");
    return (writeHead as (...a: unknown[]) => http.ServerResponse).apply(this, args);
  } as typeof response.writeHead;
  // Before Node's own handler on the same event, which would start an unbounded drain of an untouched body.
  response.prependOnceListener("finish", () => {
    if (request.readableEnded) return;
    if (request.destroyed) {
      // Said so in the answer when the head went after the app let go; if it went before, close anyway.
      if (!request.complete) socket?.end();
      return;
    }
    let read = 0;
    const close = () => socket?.destroy();
    const timer = setTimeout(close, DRAIN_MAX_MS);
    timer.unref();
    // The app's own listeners would feed a stream it has already let go of.
    request.removeAllListeners("data");
    request.on("data", (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_MAX_BYTES) close();
    });
    request.once("end", () => clearTimeout(timer));
    request.once("close", () => clearTimeout(timer));
    request.resume();
  });
}
