import type { Admin } from "kafkajs";
import { SUBSCRIPTIONS, TOPICS } from "./topics";

export interface PartitionLag {
  partition: number;
  /** The group's committed offset; null when it has committed nothing on this partition yet. */
  committed: number | null;
  /** The log-end offset (high watermark). */
  end: number;
  lag: number;
}

export interface GroupLag {
  topic: string;
  group: string;
  total_lag: number;
  partitions: PartitionLag[];
}

/** Which consumer group reads which topic: the lag the system page shows. */
export const WATCHED_GROUPS = Object.values(SUBSCRIPTIONS).map(({ topic, groupId }) => ({ topic, group: groupId }));

/**
 * Lag per partition: the log-end offset minus the group's committed offset (a partition the group
 * has not committed on counts from the log start, as the consumers read from the beginning). Also
 * the number of events in the audit log, ai.generation.completed. Admin requests only: no consumer
 * joins a group, so reading this costs a few metadata round trips.
 */
export async function readConsumerLag(
  admin: Admin,
  watched = WATCHED_GROUPS,
): Promise<{ groups: GroupLag[]; audit_log: { topic: string; events: number } }> {
  const groups = await Promise.all(
    watched.map(async ({ topic, group }) => {
      const [ends, [committed]] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId: group, topics: [topic] }),
      ]);
      const byPartition = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      const partitions = ends
        .map(({ partition, high, low }) => {
          const at = byPartition.get(partition);
          const hasCommit = at !== undefined && at >= 0;
          return {
            partition,
            committed: hasCommit ? at : null,
            end: Number(high),
            lag: Math.max(0, Number(high) - (hasCommit ? at : Number(low))),
          };
        })
        .sort((a, b) => a.partition - b.partition);
      return { topic, group, total_lag: partitions.reduce((sum, p) => sum + p.lag, 0), partitions };
    }),
  );
  const completed = await admin.fetchTopicOffsets(TOPICS.completed.name);
  const events = completed.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  return { groups, audit_log: { topic: TOPICS.completed.name, events } };
}
