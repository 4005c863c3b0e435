import { KeySlots } from "../consume/key-slots";
import type { Redis } from "../redis";
import { CONSUMER_GROUPS } from "../topics";
import { liveWorkers, type SeenWorker } from "../live-workers";

export interface TenantLoad {
  /** The tenant's generation jobs running across the cluster (its taken slots). */
  running: number;
  /** Its jobs fetched by a worker and waiting for a slot. */
  waiting: number;
  /** TENANT_CONCURRENCY. */
  limit: number;
}

/** The tenant's share of the generation workers: running across the cluster, waiting in the workers' windows. */
export async function readTenantLoad(
  redis: Redis,
  tenantId: string,
  limit: number,
  workers?: SeenWorker[],
): Promise<TenantLoad> {
  const [running, seen] = await Promise.all([
    new KeySlots(redis, CONSUMER_GROUPS.generation, limit).count(tenantId),
    workers ?? liveWorkers(redis),
  ]);
  const waiting = seen.reduce(
    (sum, w) => sum + (w.stats.generation?.keys.find((k) => k.key === tenantId)?.waiting ?? 0),
    0,
  );
  return { running, waiting, limit };
}
