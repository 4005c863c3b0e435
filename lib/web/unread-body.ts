import type http from "node:http";

/** How much of a body the server reads and drops after answering before it, to keep the connection. */
export const DRAIN_MAX_BYTES = 4 * 1024 * 1024;
/** How long it waits for that rest to come. */
export const DRAIN_MAX_MS = 5_000;

/**
 * A route that refuses a body before reading all of it (413 past the limit, 401 before the body)
 * leaves the rest on the connection. Node drains a body nobody touched, but one the app began to
 * read and then dropped stays paused, and the connection with it: the next request on it is never
 * read, until Node resets it a minute later (issue 46: behind a proxy that reuses connections,
 * other people's requests hung). Once such an answer is sent the rest is read and dropped, as Node
 * drains an untouched body, up to DRAIN_MAX_BYTES within DRAIN_MAX_MS; past either the connection
 * is closed, not kept. Reading the rest rather than closing at once keeps the answer: a socket
 * closed with unread bytes sends a reset, which can discard the answer before the client reads it.
 */
export function drainAfterEarlyAnswer(request: http.IncomingMessage, response: http.ServerResponse): void {
  // Before Node's own handler on the same event, which would start an unbounded drain of an untouched body.
  response.prependOnceListener("finish", () => {
    if (request.complete) return;
    const socket = request.socket;
    if (request.destroyed) {
      socket?.destroy();
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
