import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Redis } from "../../redis";

/**
 * The OAuth `state` of a connection through Meta's login: random, single use, bound to the
 * signed-in session (a digest of its credential) and the tenant, valid `ttlS` seconds. The record
 * outlives its validity by an hour so a late or repeated callback is told which of these it is.
 */

export type LoginProvider = "instagram" | "facebook";

export interface LoginStateRecord {
  tenantId: string;
  /** Digest of the credential that started the connection (the session cookie). */
  binding: string;
  provider: LoginProvider;
  expiresAt: number;
}

export type TakenState =
  { ok: true; record: LoginStateRecord } | { ok: false; reason: "unknown" | "replayed" | "expired" | "other-session" };

const stateKey = (state: string) => `meta-login:state:${state}`;
const KEPT_AFTER_S = 3600;

/** The digest a state is bound to; never the credential itself. */
export function bindingOf(credential: string): string {
  return createHash("sha256").update(`meta-login-binding:${credential}`).digest("hex");
}

export async function createLoginState(
  redis: Redis,
  input: Omit<LoginStateRecord, "expiresAt">,
  ttlS: number,
  now: number,
): Promise<string> {
  const state = randomBytes(24).toString("base64url");
  const record: LoginStateRecord = { ...input, expiresAt: now + ttlS * 1000 };
  await redis.set(stateKey(state), JSON.stringify(record), "EX", ttlS + KEPT_AFTER_S, "NX");
  return state;
}

// Marks the state used and answers its record; 'used' when it was already, nil when unknown.
const TAKE = `
local record = redis.call('GET', KEYS[1])
if not record then return nil end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) == false then return 'used' end
return record`;

/**
 * Takes the state for one callback: a second callback with it is `replayed` even when the first
 * failed, so a stolen or repeated redirect never connects anything.
 */
export async function takeLoginState(
  redis: Redis,
  state: string,
  expected: { tenantId: string; binding: string; provider: LoginProvider },
  now: number,
): Promise<TakenState> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(state)) return { ok: false, reason: "unknown" };
  const answer = (await redis.eval(TAKE, 2, stateKey(state), `${stateKey(state)}:used`, String(KEPT_AFTER_S * 2))) as
    string | null;
  if (answer === null) return { ok: false, reason: "unknown" };
  if (answer === "used") return { ok: false, reason: "replayed" };
  const record = JSON.parse(answer) as LoginStateRecord;
  // A state handed to the other login's callback was not started for it.
  if (record.provider !== expected.provider) return { ok: false, reason: "unknown" };
  if (record.tenantId !== expected.tenantId || !sameDigest(record.binding, expected.binding))
    return { ok: false, reason: "other-session" };
  if (now >= record.expiresAt) return { ok: false, reason: "expired" };
  return { ok: true, record };
}

/** Compares two bindings in constant time. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
