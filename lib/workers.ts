import type { Redis } from "./redis";

const WORKERS_KEY = "workers:seen";
const BEAT_MS = 2000;
const ALIVE_MS = 6000;

/** A worker says it is alive every 2 s; health and the system page count the ones seen lately. */
export function registerWorker(redis: Redis, workerId: string, consumers: string[]): { stop(): Promise<void> } {
  const beat = () => redis.zadd(WORKERS_KEY, Date.now(), JSON.stringify({ id: workerId, consumers, pid: process.pid })).catch(() => {});
  void beat();
  const timer = setInterval(beat, BEAT_MS);
  return {
    async stop() {
      clearInterval(timer);
      await redis.zrem(WORKERS_KEY, JSON.stringify({ id: workerId, consumers, pid: process.pid })).catch(() => {});
    },
  };
}

export async function liveWorkers(redis: Redis, now = Date.now()): Promise<{ id: string; consumers: string[]; last_seen: string }[]> {
  await redis.zremrangebyscore(WORKERS_KEY, "-inf", now - 10 * ALIVE_MS);
  const raw = await redis.zrangebyscore(WORKERS_KEY, now - ALIVE_MS, "+inf", "WITHSCORES");
  const workers = [];
  for (let i = 0; i < raw.length; i += 2) {
    const { id, consumers } = JSON.parse(raw[i]) as { id: string; consumers: string[] };
    workers.push({ id, consumers, last_seen: new Date(Number(raw[i + 1])).toISOString() });
  }
  return workers;
}
