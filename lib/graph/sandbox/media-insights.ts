import { limitsOf, type SandboxDeps } from "./deps";
import { authorize, graphJson, invalidParameter, unsupportedRequest, type GraphCall } from "./graph-request";
import { seededInsights, SANDBOX_INSIGHT_METRICS, type SandboxInsightMetric } from "./insights-growth";
import { requirePermission } from "./permissions";
import { takeFault } from "./sandbox-accounts";
import { keys, readMediaRecord } from "./store";

/**
 * `GET /{ig-media-id}/insights?metric=…` as Meta answers it: one entry per metric asked for, in
 * the order asked, with period `lifetime`; an empty `data` while the reel is younger than the lag
 * (SANDBOX_INSIGHTS_LAG_MS: Meta's figures lag up to 48 h); error 100 for a metric Meta retired in
 * v22.0 or never had, listing the valid ones. The figures grow from the media id (insights-growth.ts) unless the control
 * surface set some (PUT /_sandbox/media/{id}/insights), which are served as they are, lag or not.
 */

const ABOUT: Record<SandboxInsightMetric, [title: string, description: string]> = {
  views: ["Views", "The number of times your reel was played or displayed."],
  reach: ["Accounts reached", "The number of unique accounts that have seen your reel at least once."],
  likes: ["Likes", "The number of likes on your reel."],
  comments: ["Comments", "The number of comments on your reel."],
  shares: ["Shares", "The number of shares of your reel."],
  saved: ["Saved", "The number of saves of your reel."],
  total_interactions: [
    "Interactions",
    "The number of likes, saves, comments and shares on your reel, minus the number of unlikes, unsaves and deleted comments.",
  ],
  ig_reels_avg_watch_time: ["Average watch time", "The average amount of time spent playing your reel (ms)."],
  ig_reels_video_view_total_time: [
    "Watch time",
    "The total amount of time your reel was played, including replays (ms).",
  ],
};

const isMetric = (name: string): name is SandboxInsightMetric =>
  (SANDBOX_INSIGHT_METRICS as readonly string[]).includes(name);

/** The metrics asked for, checked as Meta checks them: any retired or unknown one refuses the whole call. */
export function requestedMetrics(raw: string | undefined): SandboxInsightMetric[] {
  const names = (raw ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  if (names.length === 0) throw invalidParameter("The parameter metric is required");
  // A retired metric (DEPRECATED_INSIGHT_METRICS, gone since v22.0) is refused as an unknown one, in
  // Meta's words (graph-reference.md): "metric[N] must be one of the following values: …".
  const unknown = names.find((m) => !isMetric(m));
  if (unknown)
    throw invalidParameter(
      `metric[${names.indexOf(unknown)}] must be one of the following values: ${SANDBOX_INSIGHT_METRICS.join(", ")}`,
    );
  return [...new Set(names)] as SandboxInsightMetric[];
}

export async function readMediaInsights(call: GraphCall, mediaId: string): Promise<Response> {
  if (call.method !== "GET") throw unsupportedRequest(call.method, mediaId);
  const media = await readMediaRecord(call.deps.redis, mediaId);
  if (!media) throw unsupportedRequest(call.method, mediaId);
  authorize(call, media.account_id, media.id);
  requirePermission(call, "insights");
  const fault = await takeFault(call.deps, media.account_id, "insights");
  if (fault) throw fault;
  const metrics = requestedMetrics(call.params.metric);
  const values = await insightsOf(call.deps, media.id, call.deps.now() - media.timestamp);
  const data = values
    ? metrics.map((name) => ({
        name,
        period: "lifetime",
        values: [{ value: values[name] }],
        title: ABOUT[name][0],
        description: ABOUT[name][1],
        id: `${media.id}/insights/${name}/lifetime`,
      }))
    : [];
  return graphJson({ data });
}

/** The figures to answer with: the ones set through the control surface, else the grown ones once the lag has passed; null: none yet. */
async function insightsOf(
  deps: SandboxDeps,
  mediaId: string,
  ageMs: number,
): Promise<Record<SandboxInsightMetric, number> | null> {
  const set = await deps.redis.hgetall(keys.mediaInsights(mediaId));
  if (Object.keys(set).length > 0) {
    const grown = seededInsights(mediaId, ageMs);
    return Object.fromEntries(
      SANDBOX_INSIGHT_METRICS.map((m) => [m, set[m] === undefined ? grown[m] : Number(set[m])]),
    ) as Record<SandboxInsightMetric, number>;
  }
  return ageMs < limitsOf(deps).insightsLagMs ? null : seededInsights(mediaId, ageMs);
}

/** The control surface's PUT: figures that replace the grown ones (the rest keep growing); {} goes back to growth alone. False: no such reel. */
export async function setMediaInsights(
  deps: SandboxDeps,
  mediaId: string,
  values: Partial<Record<SandboxInsightMetric, number>>,
): Promise<boolean> {
  const media = await readMediaRecord(deps.redis, mediaId);
  if (!media) return false;
  const key = keys.mediaInsights(mediaId);
  const fields = Object.entries(values).flatMap(([m, v]) => (v === undefined ? [] : [m, String(v)]));
  const write = deps.redis.multi().del(key);
  if (fields.length > 0) write.hset(key, ...fields).pexpire(key, limitsOf(deps).mediaTtlMs);
  await write.exec();
  return true;
}
