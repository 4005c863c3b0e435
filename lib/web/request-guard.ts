import http from "node:http";
import { ApiError, toProblem } from "../errors";
import { servesHost } from "../net/served-hosts";
import { settleUnreadBody } from "./unread-body";

/**
 * Set on every request from the socket's peer address, over anything a client sent, so it can be
 * trusted where X-Forwarded-For cannot (Next keeps an X-Forwarded-For a client sent).
 */
export const PEER_HEADER = "x-dispatch-peer";

export interface GuardOptions {
  /** How the parts of the site answer in their own error shape (Graph's under /graph/). */
  answers?: readonly MalformedPathAnswer[];
  /**
   * The Host names served (lib/net/served-hosts.ts), asked on each request until it gives them
   * (the configuration may not parse yet; the routes report that); undefined: every Host is served.
   */
  servedHosts?: () => ReadonlySet<string> | undefined;
}

/**
 * Hooks the web server's request event, before Next sees a request (route handlers see no
 * socket, and Next answers some input with a bare 500 before any handler runs). Here rather than
 * in proxy.ts: it runs for every path (static files and Next's own 404s too) at the cost of a
 * string compare, where Next's proxy builds a NextRequest per request. It:
 * - stamps PEER_HEADER from the socket;
 * - answers a path with a malformed percent-encoding (`/jobs/%E0%A4%A`) with a 400 in the API's
 *   shape, or in the shape `answers` gives for its prefix (Graph's under /graph/): Next fails to
 *   decode it while routing and answers 500;
 * - answers a malformed `Host` or `X-Forwarded-Host` (`a b`, `[`, a port past 65535) the same way:
 *   every URL built from it throws, and as no credentials are needed to send one (DELETE
 *   /api/session), each would log a stack trace;
 * - answers a `Host` this server does not serve with 421 Misdirected Request (DNS rebinding);
 * - drains what is left of a body the app answered before reading it all, so the connection
 *   serves its next request (lib/web/unread-body.ts).
 * Called once by instrumentation.ts in the web server's process.
 */
export function guardRequests(options: GuardOptions = {}): void {
  const { answers = [], servedHosts } = options;
  const prototype = http.Server.prototype as {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
    __dispatchGuard?: boolean;
  };
  if (prototype.__dispatchGuard) return;
  prototype.__dispatchGuard = true;
  const emit = prototype.emit;
  let served: ReadonlySet<string> | undefined;
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
        refuse(400, path, `${malformed}.`, response, answers);
        return true;
      }
      served ??= servedHosts?.();
      if (served && !servesHost(served, request.headers.host, request.socket?.localAddress)) {
        refuse(421, path, "This server does not answer for that Host; see ALLOWED_HOSTS.", response, answers);
        return true;
      }
      settleUnreadBody(request, response);
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

/** How the part of the site under `prefix` answers a request refused here, in its own error shape. */
export interface MalformedPathAnswer {
  prefix: string;
  contentType: string;
  body: (what: string) => unknown;
}

function refuse(
  status: 400 | 421,
  path: string,
  what: string,
  response: http.ServerResponse,
  answers: readonly MalformedPathAnswer[],
): void {
  const own = answers.find((answer) => path.startsWith(answer.prefix));
  const code = status === 421 ? "misdirected" : "bad-request";
  const body = own ? own.body(what.replace(/\.$/, "")) : toProblem(new ApiError(code, what)).problem;
  response.writeHead(status, {
    "content-type": own?.contentType ?? "application/problem+json",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    connection: "close",
  });
  response.end(JSON.stringify(body));
}
