/**
 * A published reel's insights as Dispatch reads and shows them: the metric names Graph takes on
 * `GET /{ig-media-id}/insights` (graph-reference.md, "Insights of a published reel"), dependency-free
 * so the dashboard imports them as values and the sandbox serves the same names.
 */

export const REEL_INSIGHT_METRICS = [
  "views",
  "reach",
  "likes",
  "comments",
  "shares",
  "saved",
  "total_interactions",
  "ig_reels_avg_watch_time",
] as const;
export type ReelInsightMetric = (typeof REEL_INSIGHT_METRICS)[number];

/** Gone since v22.0 (`views` replaces them): Graph refuses them with error 100. */
export const DEPRECATED_INSIGHT_METRICS = [
  "plays",
  "clips_replays_count",
  "ig_reels_aggregated_all_plays_count",
  "impressions",
] as const;

/** What a person reads for each metric; the average watch time is in milliseconds, as Graph gives it. */
export const INSIGHT_LABELS: Record<ReelInsightMetric, string> = {
  views: "Views",
  reach: "Reach",
  likes: "Likes",
  comments: "Comments",
  shares: "Shares",
  saved: "Saves",
  total_interactions: "Interactions",
  ig_reels_avg_watch_time: "Avg. watch time",
};

/**
 * Where a reel's insights stand: `available` (values from Graph), `pending` (Graph answered an
 * empty `data`: its figures lag up to 48 h), `no-permission` (the token lacks the insights
 * permission), `failed` (Graph or the account could not be asked; earlier values, if any, are
 * kept), `not-fetched` (not asked yet).
 */
export const INSIGHTS_STATUSES = ["available", "pending", "no-permission", "failed", "not-fetched"] as const;
export type InsightsStatus = (typeof INSIGHTS_STATUSES)[number];

export type InsightValues = Partial<Record<ReelInsightMetric, number>>;

/** A published reel's insights for clients: the card and GET /api/reels/{id}/insights. */
export interface ReelInsightsView {
  publication_id: string;
  media_id: string;
  account_id: string;
  status: InsightsStatus;
  /** The last values Graph gave (null until it gave some); a metric it did not name is null. */
  metrics: Record<ReelInsightMetric, number | null> | null;
  /** When those values were read (ISO); null before the first. */
  fetched_at: string | null;
  /** When Graph was last asked, whatever it answered (ISO). */
  checked_at: string | null;
  /** Graph is asked again on view no sooner than this (ISO). */
  next_refresh_at: string | null;
  /** What a person should know about the status: the missing permission, the failure. */
  message: string | null;
  published_at: string;
}

/** A row of an account's insights table: the reel and its insights. */
export interface AccountInsightsRow extends ReelInsightsView {
  caption: string;
  permalink: string | null;
}
