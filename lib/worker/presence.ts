import type { ConsumerStats } from "../consume/parallel-consumer";
import { WORKERS_KEY, type Beat } from "../live-workers";
import type { Redis } from "../redis";

const BEAT_MS = 2000;

export interface WorkerPresence {
  /** Reports a consumer of this worker: its partitions, running work and windows, read at every beat. */
  track(consumer: string, stats: () => ConsumerStats): void;
  /** Beats now rather than at the next tick: a consumer's partitions changed (tests and the system page wait for it). */
  changed(): void;
  stop(): Promise<void>;
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
    // A beat lost to a Redis outage is sent again with the next one, 2 s later.
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
      // A field left behind stops counting as alive after 6 s, and a reader removes it after a minute.
      await redis.hdel(WORKERS_KEY, workerId).catch(() => {});
    },
  };
}
