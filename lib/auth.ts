import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "./errors";

export interface Tenant {
  tenantId: string;
}

export const SESSION_COOKIE = "dispatch_session";
const SESSION_TTL_S = 7 * 24 * 3600;

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/**
 * API keys are kept only as SHA-256 digests and compared in constant time; the dashboard gets an
 * HMAC-signed, httpOnly session cookie in exchange for a key, so the key never lives in the browser.
 */
export class KeyRing {
  private readonly digests: { digest: Buffer; tenantId: string }[];
  private readonly sessionSecret: Buffer;

  constructor(keys: { tenantId: string; key: string }[]) {
    this.digests = keys.map((k) => ({ digest: sha256(k.key), tenantId: k.tenantId }));
    this.sessionSecret = sha256(`dispatch-session:${keys.map((k) => k.key).sort().join(",")}`);
  }

  tenantForKey(key: string): string | undefined {
    const digest = sha256(key);
    let found: string | undefined;
    // Compare against every digest so the time taken does not depend on which key matched.
    for (const entry of this.digests) if (timingSafeEqual(entry.digest, digest)) found ??= entry.tenantId;
    return found;
  }

  issueSession(tenantId: string, now = Date.now()): { value: string; maxAge: number } {
    const expires = Math.floor(now / 1000) + SESSION_TTL_S;
    const body = `${Buffer.from(tenantId).toString("base64url")}.${expires}`;
    return { value: `${body}.${this.sign(body)}`, maxAge: SESSION_TTL_S };
  }

  tenantForSession(value: string, now = Date.now()): string | undefined {
    const [tenant64, expires, signature] = value.split(".");
    if (!tenant64 || !expires || !signature) return undefined;
    const expected = Buffer.from(this.sign(`${tenant64}.${expires}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    if (Number(expires) * 1000 < now) return undefined;
    return Buffer.from(tenant64, "base64url").toString();
  }

  private sign(body: string): string {
    return createHmac("sha256", this.sessionSecret).update(body).digest("base64url");
  }
}

function readCookie(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

/** The tenant a request acts for: a Bearer API key, or the dashboard's session cookie. 401 otherwise. */
export function authenticate(request: Request, keys: KeyRing): Tenant {
  const header = request.headers.get("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const tenantId = match ? keys.tenantForKey(match[1]) : undefined;
    if (!tenantId) throw new ApiError("unauthorized", "The API key is missing or not valid.", undefined, { "WWW-Authenticate": "Bearer" });
    return { tenantId };
  }
  const session = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  const tenantId = session ? keys.tenantForSession(session) : undefined;
  if (!tenantId) throw new ApiError("unauthorized", "Send an API key as 'Authorization: Bearer <key>'.", undefined, { "WWW-Authenticate": "Bearer" });
  return { tenantId };
}
