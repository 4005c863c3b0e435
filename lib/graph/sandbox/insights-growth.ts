import { createHash } from "node:crypto";
import { REEL_INSIGHT_METRICS } from "../insights-metrics";

/**
 * The insights the sandbox gives a published reel: seeded from its media id and grown with its age,
 * so a test predicts them (a pure function) and a rehearsal sees figures that climb like a real
 * reel's: fast in the first hours, then slower. Every figure is a fixed share of one curve, so none
 * ever falls as the reel ages, and views ≥ reach ≥ the interactions, as on Instagram.
 */

/** Graph's names, plus the total watch time the reference lists (Dispatch does not show it). */
export const SANDBOX_INSIGHT_METRICS = [...REEL_INSIGHT_METRICS, "ig_reels_video_view_total_time"] as const;
export type SandboxInsightMetric = (typeof SANDBOX_INSIGHT_METRICS)[number];
export type SandboxInsights = Record<SandboxInsightMetric, number>;

/** The age at which the curve has reached about 63 % of a reel's reach. */
const GROWTH_MS = 12 * 60 * 60_000;

/** Four numbers in [0, 1) from the media id: the reel's audience and its rates. */
function seedsOf(mediaId: string): [number, number, number, number] {
  const digest = createHash("sha256").update(`sandbox-insights:${mediaId}`).digest();
  const at = (i: number) => digest.readUInt32BE(i * 4) / 2 ** 32;
  return [at(0), at(1), at(2), at(3)];
}

/** The reel's insights `ageMs` after publishing (0 before). */
export function seededInsights(mediaId: string, ageMs: number): SandboxInsights {
  const [audience, engagement, conversation, watch] = seedsOf(mediaId);
  // A square-root start: a new reel gets its first viewers within seconds, not hours.
  const grown = 1 - Math.exp(-Math.sqrt(Math.max(0, ageMs) / GROWTH_MS));
  const reachCap = 500 + Math.floor(audience * 20_000);
  const reach = Math.floor(reachCap * grown);
  const share = (rate: number) => Math.floor(reachCap * rate * grown);
  const likes = share(0.03 + engagement * 0.07);
  const comments = share((0.03 + engagement * 0.07) * (0.05 + conversation * 0.1));
  const shares = share(0.005 + conversation * 0.015);
  const saved = share(0.004 + engagement * 0.011);
  const views = share(1.15 + watch * 0.4);
  const avgWatchMs = 2500 + Math.floor(watch * 9000);
  return {
    views,
    reach,
    likes,
    comments,
    shares,
    saved,
    total_interactions: likes + comments + shares + saved,
    ig_reels_avg_watch_time: reach > 0 ? avgWatchMs : 0,
    ig_reels_video_view_total_time: views * avgWatchMs,
  };
}
