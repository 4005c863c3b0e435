import type { ConsumerStats } from "./consume/parallel-consumer";
import type { Redis } from "./redis";

/**
 * The workers' heartbeats as health, metrics and the system page read them; each worker writes
 * its own (lib/worker/presence.ts).
 */

/** The hash of worker heartbeats, one field per worker. */
export const WORKERS_KEY = "workers:seen";
/** A worker not seen for this long is not counted as alive (it beats every 2 s). */
const ALIVE_MS = 6000;

/** One worker's heartbeat, as lib/worker/presence.ts writes it (with `at`, the time of the beat). */
export interface Beat {
  id: string;
  pid: number;
  /** The partitions each consumer holds. */
  assignments: Record<string, number[]>;
  stats: Record<string, ConsumerStats>;
}

export interface SeenWorker {
  id: string;
  last_seen: string;
  /** The consumers it runs, and the partitions each holds. */
  consumers: string[];
  assignments: Record<string, number[]>;
  stats: Record<string, ConsumerStats>;
}

export async function liveWorkers(redis: Redis, now = Date.now()): Promise<SeenWorker[]> {
  const all = await redis.hgetall(WORKERS_KEY);
  const live: SeenWorker[] = [];
  const gone: string[] = [];
  for (const [id, raw] of Object.entries(all)) {
    const beat = JSON.parse(raw) as Beat & { at: number };
    if (now - beat.at > 10 * ALIVE_MS) gone.push(id);
    else if (now - beat.at <= ALIVE_MS)
      live.push({
        id,
        last_seen: new Date(beat.at).toISOString(),
        consumers: Object.keys(beat.assignments),
        assignments: beat.assignments,
        stats: beat.stats ?? {},
      });
  }
  if (gone.length) await redis.hdel(WORKERS_KEY, ...gone);
  return live.sort((a, b) => a.id.localeCompare(b.id));
}

/** What one consumer of a worker is doing, without the per-tenant detail (other tenants' names stay private). */
export type ConsumerLoad = Omit<ConsumerStats, "keys">;

export interface WorkerLoad {
  id: string;
  last_seen: string;
  consumers: Record<string, ConsumerLoad>;
}

/** The workers' load as health and the system page show it: running, capacity, windows; never tenant names. */
export function workerLoad(workers: SeenWorker[]): WorkerLoad[] {
  return workers.map((w) => ({
    id: w.id,
    last_seen: w.last_seen,
    consumers: Object.fromEntries(Object.entries(w.stats).map(([name, { keys: _keys, ...load }]) => [name, load])),
  }));
}
