import type { z } from "zod";

/**
 * Parses a Redis hash (HGETALL's answer) with its record's schema: undefined when there is no
 * record there (no `idField`: HGETALL answers {} for a missing key) or not a whole one.
 */
export function parseHashRecord<T>(
  schema: z.ZodType<T>,
  idField: string,
  hash: Record<string, string> | null | undefined,
): T | undefined {
  if (!hash?.[idField]) return undefined;
  const parsed = schema.safeParse(hash);
  return parsed.success ? parsed.data : undefined;
}

/** A field holding JSON, parsed; undefined when it is absent, empty or not JSON. */
export function jsonField(raw: unknown): unknown {
  if (typeof raw !== "string" || raw === "") return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
