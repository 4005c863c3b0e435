import { randomBytes } from "node:crypto";
import type { Redis } from "../../redis";
import type { LoginCaller } from "./login-callback";
import { sameDigest } from "./login-state";

/**
 * What a login keeps for the dashboard page the browser goes to next (the picker's choice, a
 * refusal's message): in Redis under a random id, the only thing that page's address carries,
 * and readable only by the tenant and session that logged in.
 */

export const RECORD_ID_PATTERN = /^[A-Za-z0-9_-]{32}$/;

interface BoundRecord<T> extends LoginCaller {
  value: T;
}

export type ReadBoundRecord<T> = { ok: true; value: T } | { ok: false; reason: "unknown" | "other-session" };

export async function saveSessionBound<T>(
  redis: Redis,
  keyOf: (id: string) => string,
  caller: LoginCaller,
  value: T,
  ttlS: number,
): Promise<string> {
  const id = randomBytes(24).toString("base64url");
  const record: BoundRecord<T> = { tenantId: caller.tenantId, binding: caller.binding, value };
  await redis.set(keyOf(id), JSON.stringify(record), "EX", ttlS, "NX");
  return id;
}

/** The record under `id`, when `caller` is the session that saved it. */
export async function readSessionBound<T>(
  redis: Redis,
  keyOf: (id: string) => string,
  id: string,
  caller: LoginCaller,
): Promise<ReadBoundRecord<T>> {
  if (!RECORD_ID_PATTERN.test(id)) return { ok: false, reason: "unknown" };
  const stored = await redis.get(keyOf(id));
  if (stored === null) return { ok: false, reason: "unknown" };
  const record = JSON.parse(stored) as BoundRecord<T>;
  if (record.tenantId !== caller.tenantId || !sameDigest(record.binding, caller.binding))
    return { ok: false, reason: "other-session" };
  return { ok: true, value: record.value };
}
