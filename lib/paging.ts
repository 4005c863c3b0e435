import { z } from "zod";
import type { Redis } from "./redis";

/**
 * Pages of a tenant index (a sorted set scored by creation time in ms), newest first. Many items
 * share a millisecond, so a page ends at a (score, id) pair, not at a score: the next page starts
 * right after that pair in the set's own order (score descending, then id descending). Clients get
 * the pair as an opaque base64url string.
 */
export interface IndexCursor {
  score: number;
  id: string;
}

export function encodeCursor(cursor: IndexCursor): string {
  return Buffer.from(`${cursor.score}.${cursor.id}`).toString("base64url");
}

/** The cursor a client sent back, or undefined when it is not one of ours. */
export function decodeCursor(value: string): IndexCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(value)) return undefined;
  const match = /^(\d{1,16})\.([A-Za-z0-9_-]{1,128})$/.exec(Buffer.from(value, "base64url").toString("latin1"));
  return match ? { score: Number(match[1]), id: match[2] } : undefined;
}

/** `?cursor=` as zod: a cursor of ours, or a 422 naming the field. */
export const cursorSchema = z.string().transform((value, ctx) => {
  const cursor = decodeCursor(value);
  if (!cursor) {
    ctx.addIssue({ code: "custom", message: "is not a cursor this API handed out (use next_cursor as it is)" });
    return z.NEVER;
  }
  return cursor;
});

/** `?limit=&cursor=` of the list endpoints: a page of up to 100, after the opaque cursor the last page returned. */
export const pageQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: cursorSchema.optional(),
});

/** Up to `limit` ids after `cursor`, and the cursor of the page after them (null on the last page). */
export async function readIndexPage(
  redis: Redis,
  key: string,
  limit: number,
  cursor?: IndexCursor,
): Promise<{ entries: IndexCursor[]; next: string | null }> {
  const entries: IndexCursor[] = [];
  if (cursor) {
    // Members of one score are ordered by id (byte order); descending, the next ones are the smaller ids.
    const tied = await redis.zrangebyscore(key, cursor.score, cursor.score);
    for (let i = tied.length - 1; i >= 0 && entries.length <= limit; i--)
      if (tied[i] < cursor.id) entries.push({ score: cursor.score, id: tied[i] });
  }
  if (entries.length <= limit) {
    const max = cursor ? `(${cursor.score}` : "+inf";
    const raw = await redis.zrevrangebyscore(key, max, "-inf", "WITHSCORES", "LIMIT", 0, limit + 1 - entries.length);
    for (let i = 0; i < raw.length; i += 2) entries.push({ id: raw[i], score: Number(raw[i + 1]) });
  }
  const page = entries.slice(0, limit);
  return { entries: page, next: entries.length > limit ? encodeCursor(page[page.length - 1]) : null };
}
