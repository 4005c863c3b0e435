import http from "node:http";
import { ApiError, toProblem } from "../errors";

/**
 * Set on every request from the socket's peer address, over anything a client sent, so it can be
 * trusted where X-Forwarded-For cannot (Next keeps an X-Forwarded-For a client sent).
 */
export const PEER_HEADER = "x-dispatch-peer";

/**
 * Hooks the web server's request event, before Next sees a request (route handlers see no
 * socket, and Next answers some input with a bare 500 before any handler runs):
 * - stamps PEER_HEADER from the socket;
 * - answers a path with a malformed percent-encoding (`/jobs/%E0%A4%A`) with a 400 in the API's
 *   shape, or in the shape `answers` gives for its prefix (Graph's under /graph/): Next fails to
 *   decode it while routing and answers 500;
 * - answers a malformed `Host` or `X-Forwarded-Host` (`a b`, `[`, a port past 65535) the same way:
 *   every URL built from it throws, and as no credentials are needed to send one (DELETE
 *   /api/session), each would log a stack trace.
 * Called once by instrumentation.ts in the web server's process.
 */
export function guardRequests(answers: readonly MalformedPathAnswer[] = []): void {
  const prototype = http.Server.prototype as {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
    __dispatchGuard?: boolean;
  };
  if (prototype.__dispatchGuard) return;
  prototype.__dispatchGuard = true;
  const emit = prototype.emit;
  prototype.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const [request, response] = args as [http.IncomingMessage, http.ServerResponse];
      request.headers[PEER_HEADER] = request.socket?.remoteAddress ?? "";
      const path = (request.url ?? "/").split("?")[0];
      const malformed = !decodes(path)
        ? "The path has a malformed percent-encoding"
        : !hostsParse(request.headers)
          ? "The Host header is malformed"
          : undefined;
      if (malformed) {
        refuseMalformed(path, malformed, response, answers);
        return true;
      }
    }
    return emit.call(this, event, ...args);
  };
}

function decodes(path: string): boolean {
  if (!path.includes("%")) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether Host and each X-Forwarded-Host entry is an authority a URL can be built on, and only that. */
function hostsParse(headers: http.IncomingHttpHeaders): boolean {
  const forwarded =
    typeof headers["x-forwarded-host"] === "string"
      ? headers["x-forwarded-host"].split(",").map((entry) => entry.trim())
      : [];
  return [headers.host, ...forwarded].every((host) => {
    if (host === undefined) return true;
    if (!/^[^\s/?#@\\]+$/.test(host)) return false;
    try {
      return new URL(`http://${host}`).host !== "";
    } catch {
      return false;
    }
  });
}

/** How the part of the site under `prefix` answers a malformed request, in its own error shape. */
export interface MalformedPathAnswer {
  prefix: string;
  contentType: string;
  body: (what: string) => unknown;
}

function refuseMalformed(
  path: string,
  what: string,
  response: http.ServerResponse,
  answers: readonly MalformedPathAnswer[],
): void {
  const own = answers.find((answer) => path.startsWith(answer.prefix));
  const body = own ? own.body(what) : toProblem(new ApiError("bad-request", `${what}.`)).problem;
  response.writeHead(400, {
    "content-type": own?.contentType ?? "application/problem+json",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    connection: "close",
  });
  response.end(JSON.stringify(body));
}
