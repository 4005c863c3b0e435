import type { z } from "zod";

export type ParsedPayload<T> = { success: true; data: T } | { success: false; reason: string };

/** A message's value read as JSON and checked against its topic's schema; why not, when it is not. */
export function parsePayload<T>(schema: z.ZodType<T>, value: Buffer | null): ParsedPayload<T> {
  let json: unknown;
  try {
    json = JSON.parse(value?.toString("utf8") ?? "");
  } catch {
    return { success: false, reason: "not JSON" };
  }
  const result = schema.safeParse(json);
  if (result.success) return result;
  return { success: false, reason: result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
}
