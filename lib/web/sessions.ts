import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { Redis } from "../redis";
import { readOrCreateSecretFile } from "../secret-file";

export const SESSION_COOKIE = "dispatch_session";

/** POST /api/session: the API key to exchange for a session cookie. */
export const signInSchema = z.strictObject({
  api_key: z.string().trim().min(1, "Enter your API key.").max(512, "That is longer than any API key."),
});
export const SESSION_TTL_S = 7 * 24 * 3600;

const sessionKey = (id: string) => `session:${id}`;

/** The Set-Cookie header of the session cookie: httpOnly, SameSite=Lax, Secure unless told otherwise; an empty value with maxAge 0 deletes it. */
export function sessionCookieHeader(value: string, maxAge: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    `Max-Age=${maxAge}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/**
 * Dashboard sessions, kept in Redis so signing out revokes them and they expire on their own.
 * The cookie holds only a random id and its HMAC under a random server secret: a forged or
 * guessed cookie is refused without a Redis read, and nothing in it derives from an API key.
 */
export class SessionStore {
  constructor(
    private readonly redis: Pick<Redis, "set" | "get" | "del">,
    private readonly secret: Buffer,
  ) {}

  async create(tenantId: string): Promise<{ value: string; maxAge: number }> {
    const id = randomBytes(24).toString("base64url");
    await this.redis.set(sessionKey(id), tenantId, "EX", SESSION_TTL_S);
    return { value: `${id}.${this.sign(id)}`, maxAge: SESSION_TTL_S };
  }

  /** The session's tenant, or undefined when the cookie is forged, revoked or expired. */
  async tenantFor(value: string): Promise<string | undefined> {
    const id = this.verified(value);
    return id ? ((await this.redis.get(sessionKey(id))) ?? undefined) : undefined;
  }

  async revoke(value: string): Promise<void> {
    const id = this.verified(value);
    if (id) await this.redis.del(sessionKey(id));
  }

  private verified(value: string): string | undefined {
    const [id, signature, ...rest] = value.split(".");
    if (!id || !signature || rest.length > 0) return undefined;
    const expected = Buffer.from(this.sign(id));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given) ? id : undefined;
  }

  private sign(id: string): string {
    return createHmac("sha256", this.secret).update(`dispatch-session:${id}`).digest("base64url");
  }
}

/** SESSION_SECRET, else a random secret generated once into DATA_DIR/session-secret, shared by web processes there. */
export function loadSessionSecret(config: { SESSION_SECRET?: string; DATA_DIR: string }): Buffer {
  if (config.SESSION_SECRET) return Buffer.from(config.SESSION_SECRET);
  const { file, value: secret } = readOrCreateSecretFile(config.DATA_DIR, "session-secret");
  if (secret.length < 32) throw new Error(`${file} holds no usable session secret; delete it to generate a new one`);
  return Buffer.from(secret);
}
