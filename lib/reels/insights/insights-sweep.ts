import { releaseLease, takeLease } from "../../lease";
import { insightsKeys, readInsightsRecord } from "./insights-store";
import { DAILY_SWEEP, readingDue, SWEEP_WINDOW_MS } from "./refresh-policy";
import { refreshReelInsights, type InsightsDeps } from "./refresh-reel-insights";

/**
 * The daily pass over the last 30 days' reels: each is read once a day (a day after publishing
 * first, when Graph has figures). One worker of the cluster sweeps at a time, under a Redis lease
 * given up when the pass ends; a pass reads at most `batch` reels, so a large backlog spreads over
 * several ticks and never bursts against Graph's limits (every call is paced by the usage headers too).
 */

export const SWEEP_LEASE_KEY = "reels:insights:sweep";

export interface SweepOptions {
  /** Names this sweeper (the worker id): the lease's holder. */
  owner: string;
  /** How long the lease lasts; longer than a pass takes (a sweeper that dies mid-pass holds the others off this long). */
  leaseMs: number;
  /** Reels read at most per pass. */
  batch: number;
}

/** One pass: the reels read (0 when another worker holds the lease or none was due). */
export async function sweepReelInsights(
  deps: InsightsDeps,
  options: SweepOptions,
  signal?: AbortSignal,
): Promise<{ read: number; held: boolean }> {
  const { redis } = deps;
  if ((await takeLease(redis, SWEEP_LEASE_KEY, options.owner, options.leaseMs)) !== "") return { read: 0, held: false };
  try {
    return { read: await sweepBatch(deps, options.batch, signal), held: true };
  } finally {
    // The next tick, on any worker, may sweep at once: only a sweeper that died waits out the lease.
    await releaseLease(redis, SWEEP_LEASE_KEY, options.owner);
  }
}

/** The pass itself, under the lease: the reels read. */
async function sweepBatch(deps: InsightsDeps, batch: number, signal: AbortSignal | undefined): Promise<number> {
  const { redis } = deps;
  const now = deps.now();
  // Older reels are no longer swept; their last figures stay readable in the account's table.
  await redis.zremrangebyscore(insightsKeys.recent, "-inf", `(${now - SWEEP_WINDOW_MS}`);
  const ids = await redis.zrangebyscore(insightsKeys.recent, now - SWEEP_WINDOW_MS, now);
  let read = 0;
  for (const id of ids) {
    if (read >= batch || signal?.aborted) break;
    const record = await readInsightsRecord(redis, id);
    if (!record) {
      await redis.zrem(insightsKeys.recent, id);
      continue;
    }
    if (!readingDue(record, deps.now(), DAILY_SWEEP)) continue;
    const after = await refreshReelInsights(deps, record, DAILY_SWEEP, signal);
    if (after.attempted_at !== record.attempted_at) read++;
  }
  return read;
}
