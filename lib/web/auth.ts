import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import { ApiError } from "../errors";
import { PEER_HEADER } from "./request-guard";
import type { AuthThrottle } from "./rate-limit";
import { SESSION_COOKIE, type SessionStore } from "./sessions";

export { SESSION_COOKIE };

export interface Tenant {
  tenantId: string;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/** API keys are kept only as SHA-256 digests and compared in constant time. */
export class KeyRing {
  private readonly digests: { digest: Buffer; tenantId: string }[];

  constructor(keys: { tenantId: string; key: string }[]) {
    this.digests = keys.map((k) => ({ digest: sha256(k.key), tenantId: k.tenantId }));
  }

  tenantForKey(key: string): string | undefined {
    const digest = sha256(key);
    let found: string | undefined;
    // Compare against every digest so the time taken does not depend on which key matched.
    for (const entry of this.digests) if (timingSafeEqual(entry.digest, digest)) found ??= entry.tenantId;
    return found;
  }
}

export interface AuthDeps {
  keys: KeyRing;
  sessions: Pick<SessionStore, "tenantFor">;
  throttle: AuthThrottle;
}

/** A cookie's value; a malformed percent-encoding reads as no cookie (a 401, never a 500). */
export function readCookie(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join("="));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export { PEER_HEADER };

const isLoopback = (address: string) => address === "::1" || /^(::ffff:)?127\./.test(address);

/**
 * The client address the sign-in throttle counts against: the socket's peer, or, when the peer is
 * a proxy on this machine, the last X-Forwarded-For entry (the one that proxy appended). A local
 * client without a proxy gets undefined: it is not throttled (it can read DATA_DIR anyway).
 */
export function clientAddress(request: Request): string | undefined {
  const peer = request.headers.get(PEER_HEADER)?.trim();
  if (peer && !isLoopback(peer)) return peer;
  const forwarded = request.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim();
  return forwarded && isIP(forwarded) && !isLoopback(forwarded) ? forwarded : undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a browser's cross-site request (403): `Sec-Fetch-Site` when the browser sends it, else
 * an `Origin` naming another host. A request with neither comes from no browser that could be
 * tricked into sending the cookie (as in Go's net/http CrossOriginProtection).
 */
export function assertSameOrigin(request: Request): void {
  if (!isSameOrigin(request)) throw crossSite();
}

function isSameOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site) return site === "same-origin" || site === "none";
  const origin = request.headers.get("origin");
  if (!origin) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const own = [request.headers.get("host"), request.headers.get("x-forwarded-host"), new URL(request.url).host];
  return own.includes(host);
}

const crossSite = () =>
  new ApiError(
    "forbidden",
    "Cross-site requests are refused: send this from the dashboard's own origin, or use an API key.",
  );

/**
 * The tenant a request acts for: a Bearer API key, or the dashboard's session cookie (then a
 * POST, DELETE or PATCH must come from the dashboard's own origin). 401 otherwise; 429 while the
 * client address is throttled for failed checks.
 */
export async function authenticate(request: Request, deps: AuthDeps): Promise<Tenant> {
  const address = clientAddress(request);
  if (address) await deps.throttle.check(address);
  const failed = async (detail: string): Promise<never> => {
    if (address) await deps.throttle.fail(address);
    throw new ApiError("unauthorized", detail, undefined, { "WWW-Authenticate": "Bearer" });
  };
  const header = request.headers.get("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const tenantId = match ? deps.keys.tenantForKey(match[1]) : undefined;
    return tenantId ? { tenantId } : failed("The API key is missing or not valid.");
  }
  const session = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  if (!session)
    throw new ApiError("unauthorized", "Send an API key as 'Authorization: Bearer <key>'.", undefined, {
      "WWW-Authenticate": "Bearer",
    });
  const tenantId = await deps.sessions.tenantFor(session);
  if (!tenantId)
    return failed("The session has ended: sign in again, or send an API key as 'Authorization: Bearer <key>'.");
  if (!SAFE_METHODS.has(request.method.toUpperCase())) assertSameOrigin(request);
  return { tenantId };
}

/**
 * The tenant whose dashboard session a request carries: how the Graph sandbox's login dialogs learn
 * who is connecting (SandboxDeps.sessionTenant). Undefined when signed out, and for a cross-site
 * POST, which the dashboard's own routes refuse too: another page cannot Allow in a person's name.
 */
export function sessionTenantOf(
  sessions: Pick<SessionStore, "tenantFor">,
): (request: Request) => Promise<string | undefined> {
  return async (request) => {
    const session = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
    if (!session) return undefined;
    if (!SAFE_METHODS.has(request.method.toUpperCase()) && !isSameOrigin(request)) return undefined;
    return sessions.tenantFor(session);
  };
}
