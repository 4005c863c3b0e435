import { KeySlots } from "../consume/key-slots";
import type { ConsumerStats } from "../consume/parallel-consumer";
import type { Redis } from "../redis";
import { CONSUMER_GROUPS } from "../topics";
import { liveWorkers, type SeenWorker } from "../live-workers";

/** What one consumer of a worker is doing, without the per-tenant detail (other tenants' names stay private). */
export type ConsumerLoad = Omit<ConsumerStats, "keys">;

export interface WorkerLoad {
  id: string;
  last_seen: string;
  consumers: Record<string, ConsumerLoad>;
}

export interface TenantLoad {
  /** The tenant's generation jobs running across the cluster (its taken slots). */
  running: number;
  /** Its jobs fetched by a worker and waiting for a slot. */
  waiting: number;
  /** TENANT_CONCURRENCY. */
  limit: number;
}

/** The workers' load as health and the system page show it: running, capacity, windows; never tenant names. */
export function workerLoad(workers: SeenWorker[]): WorkerLoad[] {
  return workers.map((w) => ({
    id: w.id,
    last_seen: w.last_seen,
    consumers: Object.fromEntries(Object.entries(w.stats).map(([name, { keys: _keys, ...load }]) => [name, load])),
  }));
}

/** The tenant's share of the generation workers: running across the cluster, waiting in the workers' windows. */
export async function readTenantLoad(redis: Redis, tenantId: string, limit: number, workers?: SeenWorker[]): Promise<TenantLoad> {
  const [running, seen] = await Promise.all([new KeySlots(redis, CONSUMER_GROUPS.generation, limit).count(tenantId), workers ?? liveWorkers(redis)]);
  const waiting = seen.reduce((sum, w) => sum + (w.stats.generation?.keys.find((k) => k.key === tenantId)?.waiting ?? 0), 0);
  return { running, waiting, limit };
}
