/**
 * How often Dispatch asks Graph for a reel's insights, which count against the same rate limits
 * as publishing (graph-reference.md): on view at most every 15 minutes per reel; and once a day,
 * by the worker's sweep, for the reels of the last 30 days.
 */
export const VIEW_REFRESH_MS = 15 * 60_000;
export const SWEEP_REFRESH_MS = 24 * 60 * 60_000;
export const SWEEP_WINDOW_MS = 30 * 24 * 60 * 60_000;

export interface RefreshPolicy {
  /** No reading sooner than this after the last one. */
  intervalMs: number;
  /** Count the publish itself as a reading: the sweep's first pass comes a day after publishing, when Graph has figures. */
  fromPublish: boolean;
}

export const ON_VIEW: RefreshPolicy = { intervalMs: VIEW_REFRESH_MS, fromPublish: false };
export const DAILY_SWEEP: RefreshPolicy = { intervalMs: SWEEP_REFRESH_MS, fromPublish: true };

/** When the reel may be read next under `policy` (ms): now or earlier means due. */
export function nextReadingAt(reel: { attempted_at: number; published_at: number }, policy: RefreshPolicy): number {
  const last = Math.max(reel.attempted_at, policy.fromPublish ? reel.published_at : 0);
  return last > 0 ? last + policy.intervalMs : 0;
}

export function readingDue(
  reel: { attempted_at: number; published_at: number },
  now: number,
  policy: RefreshPolicy,
): boolean {
  return nextReadingAt(reel, policy) <= now;
}
