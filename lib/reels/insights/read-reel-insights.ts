import { z } from "zod";
import { ApiError } from "../../errors";
import { readPublicationRecord } from "../publication-record";
import { publicationNotFound } from "../read-publication";
import { parseHashRecord } from "../../hash-record";
import { execPipeline } from "../../redis";
import {
  ACCOUNT_TABLE_MAX,
  insightsKeys,
  insightsRecordSchema,
  readInsightsRecord,
  registerPublishedReel,
  type InsightsRecord,
} from "./insights-store";
import { REEL_INSIGHT_METRICS, type AccountInsightsRow, type ReelInsightsView } from "../../graph/insights-metrics";
import { nextReadingAt, ON_VIEW } from "./refresh-policy";
import { refreshReelInsights, type InsightsDeps } from "./refresh-reel-insights";

/** Reading insights for clients: one published reel's (refreshed on view when due), and an account's table. */

const iso = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null);

export function toInsightsView(record: InsightsRecord): ReelInsightsView {
  const values = record.values;
  return {
    publication_id: record.publication_id,
    media_id: record.media_id,
    account_id: record.account_id,
    status: record.status,
    metrics: values
      ? (Object.fromEntries(REEL_INSIGHT_METRICS.map((m) => [m, values[m] ?? null])) as ReelInsightsView["metrics"])
      : null,
    fetched_at: iso(record.fetched_at),
    checked_at: iso(record.attempted_at),
    next_refresh_at: iso(nextReadingAt(record, ON_VIEW)),
    message: record.message || null,
    published_at: new Date(record.published_at).toISOString(),
  };
}

/**
 * A tenant's published reel's insights, asked of Graph first when the last reading is at least
 * 15 minutes old. A reel published before insights were recorded is registered on its first view.
 */
export async function readReelInsights(
  deps: InsightsDeps,
  tenantId: string,
  publicationId: string,
  signal?: AbortSignal,
): Promise<ReelInsightsView> {
  const publication = await readPublicationRecord(deps.redis, publicationId);
  if (!publication || publication.tenant_id !== tenantId || publication.submitting) throw publicationNotFound();
  if (publication.status !== "PUBLISHED" || !publication.post_id)
    throw new ApiError("conflict", `The publication is ${publication.status}: insights exist once it is PUBLISHED.`);
  let record = await readInsightsRecord(deps.redis, publication.post_id);
  if (!record) {
    const publishedAt = Date.parse(publication.updated_at || publication.created_at) || deps.now();
    await registerPublishedReel(
      deps.redis,
      {
        mediaId: publication.post_id,
        publicationId,
        tenantId,
        accountId: publication.account_id,
        caption: publication.caption,
        permalink: publication.permalink || null,
        publishedAt,
      },
      deps.now(),
    );
    record = await readInsightsRecord(deps.redis, publication.post_id);
    if (!record) throw new ApiError("unavailable", "The reel's insights could not be recorded; try again.");
  }
  return toInsightsView(await refreshReelInsights(deps, record, ON_VIEW, signal));
}

export const INSIGHTS_SORT_KEYS = ["published_at", ...REEL_INSIGHT_METRICS] as const;
export type InsightsSortKey = (typeof INSIGHTS_SORT_KEYS)[number];

/** `?sort=&order=&limit=` of an account's insights table. */
export const accountInsightsQuerySchema = z.strictObject({
  sort: z.enum(INSIGHTS_SORT_KEYS).default("published_at"),
  order: z.enum(["asc", "desc"]).default("desc"),
  limit: z.coerce.number().int().min(1).max(ACCOUNT_TABLE_MAX).default(100),
});

/**
 * The account's published reels with their last insights, from the cache only (the card's views
 * and the daily sweep keep it fresh; a table of hundreds of reels must not ask Graph hundreds of
 * times). All of them (at most ACCOUNT_TABLE_MAX) are sorted by `sort`, then the first `limit`
 * kept; a reel without that figure goes last either way.
 */
export async function listAccountInsights(
  redis: InsightsDeps["redis"],
  tenantId: string,
  accountId: string,
  opts: z.infer<typeof accountInsightsQuerySchema>,
): Promise<AccountInsightsRow[]> {
  const ids = await redis.zrevrange(insightsKeys.account(accountId), 0, ACCOUNT_TABLE_MAX - 1);
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hgetall(insightsKeys.reel(id));
  const hashes = (await execPipeline(pipeline)) as Record<string, string>[];
  const rows = hashes
    .map((hash) => parseHashRecord(insightsRecordSchema, "media_id", hash))
    .filter((r): r is InsightsRecord => r !== undefined && r.tenant_id === tenantId && r.account_id === accountId)
    .map((r) => ({ ...toInsightsView(r), caption: r.caption, permalink: r.permalink || null }));
  const keyOf = (row: AccountInsightsRow): number | null =>
    opts.sort === "published_at" ? Date.parse(row.published_at) : (row.metrics?.[opts.sort] ?? null);
  const sign = opts.order === "asc" ? 1 : -1;
  rows.sort((a, b) => {
    const [x, y] = [keyOf(a), keyOf(b)];
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return (x - y) * sign || b.published_at.localeCompare(a.published_at);
  });
  return rows.slice(0, opts.limit);
}
