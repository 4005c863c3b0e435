/** Reading Graph's answers, which are JSON of no promised shape. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Graph ids are strings; a number would lose digits past 2^53, so only strings (or safe integers) count. */
export function idOf(body: unknown): string | null {
  if (!isRecord(body)) return null;
  if (typeof body.id === "string" && body.id.length > 0) return body.id;
  if (typeof body.id === "number" && Number.isSafeInteger(body.id)) return String(body.id);
  return null;
}
