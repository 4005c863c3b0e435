import type { ConsumerStats } from "../consume/parallel-consumer";
import type { Redis } from "../redis";

/** The hash of worker heartbeats, one field per worker. */
export const WORKERS_KEY = "workers:seen";
const BEAT_MS = 2000;
const ALIVE_MS = 6000;

export interface WorkerPresence {
  /** Reports a consumer of this worker: its partitions, running work and windows, read at every beat. */
  track(consumer: string, stats: () => ConsumerStats): void;
  /** Beats now rather than at the next tick: a consumer's partitions changed (tests and the system page wait for it). */
  changed(): void;
  stop(): Promise<void>;
}

interface Beat {
  id: string;
  pid: number;
  /** The partitions each consumer holds. */
  assignments: Record<string, number[]>;
  stats: Record<string, ConsumerStats>;
}

/**
 * A worker says it is alive every 2 s, with the partitions it holds; health and the system page
 * count the ones seen lately. One hash field per worker, so a beat replaces the last one.
 */
export function registerWorker(redis: Redis, workerId: string): WorkerPresence {
  const tracked = new Map<string, () => ConsumerStats>();
  const send = () => {
    const stats = Object.fromEntries([...tracked].map(([name, read]) => [name, read()]));
    const assignments = Object.fromEntries(Object.entries(stats).map(([name, s]) => [name, s.partitions]));
    const beat: Beat = { id: workerId, pid: process.pid, assignments, stats };
    return redis.hset(WORKERS_KEY, workerId, JSON.stringify({ ...beat, at: Date.now() })).catch(() => {});
  };
  void send();
  const timer = setInterval(send, BEAT_MS);
  return {
    track(consumer, stats) {
      tracked.set(consumer, stats);
      void send();
    },
    changed() {
      void send();
    },
    async stop() {
      clearInterval(timer);
      await redis.hdel(WORKERS_KEY, workerId).catch(() => {});
    },
  };
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
    else if (now - beat.at <= ALIVE_MS) live.push({ id, last_seen: new Date(beat.at).toISOString(), consumers: Object.keys(beat.assignments), assignments: beat.assignments, stats: beat.stats ?? {} });
  }
  if (gone.length) await redis.hdel(WORKERS_KEY, ...gone);
  return live.sort((a, b) => a.id.localeCompare(b.id));
}
