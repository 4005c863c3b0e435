import type { Producer } from "kafkajs";
import type { Redis } from "../redis";
import { publicationKeys } from "./publication-record";
import { sendPublicationRequests, type PublicationMessage } from "./publication-input";

const SCHEDULER_LOCK = "reels:scheduler:lock";
const BATCH = 100;

/**
 * Puts scheduled publications whose publish_at has come, and watched containers whose next read
 * has, on reels.publish.requests again, so the consumer never sleeps on a partition waiting for a time. One worker at a time does it (a short
 * lock); the entry leaves the set only after the broker acknowledged, so a crash repeats a message
 * rather than losing one, and the flow ignores the repeat.
 */
export async function enqueueDuePublications(deps: {
  redis: Redis;
  producer: Producer;
  workerId: string;
  now: number;
  lockMs: number;
}): Promise<number> {
  const { redis } = deps;
  if (!(await redis.set(SCHEDULER_LOCK, deps.workerId, "PX", deps.lockMs, "NX"))) return 0;
  const ids = await redis.zrangebyscore(publicationKeys.scheduled, "-inf", deps.now, "LIMIT", 0, BATCH);
  if (ids.length === 0) return 0;
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(publicationKeys.state(id), "tenant_id", "account_id", "status");
  const rows = ((await pipeline.exec()) ?? []).map(([, value]) => value as (string | null)[]);
  const messages: PublicationMessage[] = [];
  ids.forEach((id, i) => {
    const [tenantId, accountId, status] = rows[i] ?? [];
    // SCHEDULED: its time came; PROCESSING: a watched container's next status read (publish-steps.ts).
    if (!tenantId || !accountId || (status !== "SCHEDULED" && status !== "PROCESSING")) return;
    messages.push({ publication_id: id, tenant_id: tenantId, account_id: accountId });
  });
  await sendPublicationRequests(deps.producer, messages);
  await redis.zrem(publicationKeys.scheduled, ...ids);
  return messages.length;
}
