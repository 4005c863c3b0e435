import { randomUUID } from "node:crypto";
import type { Kafka } from "kafkajs";
import { readAuditArchive } from "../jobs/audit-archive";
import type { Log } from "../log";
import type { Redis } from "../redis";
import { TOPICS } from "../topics";
import { jobFactsFromAudit, jobTallies, type Tally } from "./usage-facts";
import { usageKeys } from "./usage-keys";
import { foldUsage } from "./fold-usage";

/** Every jobs hash the audit topic adds up to: key → its expiry and absolute field values. */
export type UsageTotals = Map<string, { expireAt: number; fields: Map<string, number> }>;

export interface RebuildReport {
  /** Events read and counted, and those skipped (not a final job's event, a job's second, or too old to keep). */
  counted: number;
  skipped: number;
  /** Jobs hashes written, and those removed because no event adds to them. */
  written: number;
  removed: number;
}

/**
 * Rebuilds every tenant's job aggregates from ai.generation.completed, which keeps every finished
 * job's event on a real cluster (the records expire after a day), and from the audit archive when
 * there is one (`auditArchiveDir`: the embedded broker's log is bounded and in memory): reads the
 * topic from its start to the end it had when the rebuild began, then the archive, adds the events
 * up in memory, then replaces each jobs hash whole (one MULTI per hash) and removes the ones no
 * event adds to. Reels are not on that topic and are left as they are. Jobs that finish while it
 * runs may be lost to the replacement: stop the workers first (their backlog waits on the log).
 */
export async function rebuildJobUsage(deps: {
  redis: Redis;
  kafka: Kafka;
  log: Log;
  now?: number;
  auditArchiveDir?: string;
}): Promise<RebuildReport> {
  const now = deps.now ?? Date.now();
  const totals: UsageTotals = new Map();
  // The topic and the archive have each job's event at least once, the archive a copy of the
  // topic's (a worker that died between producing it and marking it produced left a second): the
  // first one counts.
  const seen = new Set<string>();
  let counted = 0;
  let skipped = 0;
  const countEvent = (value: string) => {
    const parsed = TOPICS.completed.schema.safeParse(safeJson(value));
    const event = parsed.success && !seen.has(parsed.data.job_id) ? parsed.data : undefined;
    const facts = event && jobFactsFromAudit(event);
    const tallies = facts ? jobTallies(facts, now) : [];
    if (!event || tallies.length === 0) return void skipped++;
    seen.add(event.job_id);
    addTallies(totals, tallies);
    counted++;
  };
  await readAuditTopic(deps.kafka, countEvent);
  if (deps.auditArchiveDir) await readAuditArchive(deps.auditArchiveDir, countEvent);
  deps.log("info", "audit events read", {
    counted,
    skipped,
    hashes: totals.size,
    archive: deps.auditArchiveDir ?? null,
  });
  // Counts still pending are folded in first, so the replacement leaves none to be added on top of
  // the audit's totals (the reels' among them stay as they are).
  await foldUsage(deps.redis, Infinity);
  const { written, removed } = await replaceJobUsage(deps.redis, totals);
  return { counted, skipped, written, removed };
}

export function addTallies(totals: UsageTotals, tallies: Tally[]): void {
  for (const tally of tallies) {
    let entry = totals.get(tally.key);
    if (!entry) totals.set(tally.key, (entry = { expireAt: tally.expireAt, fields: new Map() }));
    for (const [field, by] of tally.fields) entry.fields.set(field, (entry.fields.get(field) ?? 0) + by);
  }
}

/** Writes each hash whole in its own MULTI (a reader never sees one half-written), then removes the stale ones. */
export async function replaceJobUsage(
  redis: Redis,
  totals: UsageTotals,
): Promise<{ written: number; removed: number }> {
  const stale: string[] = [];
  const stream = redis.scanStream({ match: usageKeys.pattern("jobs"), count: 1000 });
  for await (const keys of stream as AsyncIterable<string[]>) stale.push(...keys.filter((key) => !totals.has(key)));
  const entries = [...totals];
  for (let i = 0; i < entries.length; i += 100)
    await Promise.all(
      entries.slice(i, i + 100).map(([key, { expireAt, fields }]) => {
        const multi = redis.multi().del(key);
        if (fields.size) multi.hset(key, Object.fromEntries(fields)).expireat(key, expireAt);
        return multi.exec();
      }),
    );
  for (let i = 0; i < stale.length; i += 500) await redis.unlink(...stale.slice(i, i + 500));
  return { written: totals.size, removed: stale.length };
}

/** Every message of the topic up to the high watermarks it had at the start, through a throw-away group. */
async function readAuditTopic(kafka: Kafka, onValue: (value: string) => void): Promise<void> {
  const topic = TOPICS.completed.name;
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `usage-rebuild-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  try {
    const ends = new Map(
      (await admin.fetchTopicOffsets(topic))
        .filter((p) => Number(p.high) > Number(p.low))
        .map((p) => [p.partition, Number(p.high)]),
    );
    if (ends.size === 0) return;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const end = ends.get(partition);
        if (end === undefined || Number(message.offset) >= end) return;
        if (message.value) onValue(message.value.toString());
        if (Number(message.offset) + 1 >= end) ends.delete(partition);
        if (ends.size === 0) finish();
      },
    });
    await done;
  } finally {
    await consumer.disconnect();
    // The group was only a way to read. A broker that cannot delete it (the embedded one has no
    // group deletion) keeps an empty group, which holds nothing: not worth failing the rebuild for.
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
