import { randomUUID } from "node:crypto";
import { TOPICS } from "../../../lib/topics";
import type { BenchContext } from "../lib/context";
import { sleep } from "../lib/stats";

export interface AuditCheck {
  jobs: number;
  /** Jobs with their event once, on ai.generation.completed or in the audit archive (or both), and not twice in either. */
  exactlyOnce: number;
  /** Jobs with their event in neither. */
  missing: number;
  /** Jobs with two events on the log or two lines in the archive. */
  duplicated: number;
  eventsRead: number;
  /** Events the broker no longer has: the embedded mock broker keeps a bounded log per partition. */
  trimmed: number;
  /** Jobs whose event the log still has. */
  onLog?: number;
  /** Jobs whose event the audit archive (AUDIT_ARCHIVE_DIR) has; absent when the stack ran without one. */
  inArchive?: number;
}

/**
 * Reads the whole audit topic, and the audit archive when the stack keeps one (the embedded
 * default), and counts the completed events of `jobIds`: one each is the contract.
 */
export async function checkAudit(ctx: BenchContext, jobIds: string[]): Promise<AuditCheck> {
  const onLog = await countOnLog(ctx, jobIds);
  const archiveDir = ctx.stack.env.AUDIT_ARCHIVE_DIR;
  const inArchive = archiveDir ? await countInArchive(archiveDir, jobIds) : undefined;
  const copies = (id: string) => ({ log: onLog.counts.get(id) ?? 0, archived: inArchive?.get(id) ?? 0 });
  const verdict = (id: string) => {
    const { log, archived } = copies(id);
    return log > 1 || archived > 1 ? "duplicated" : log + archived === 0 ? "missing" : "once";
  };
  const verdicts = jobIds.map(verdict);
  const [exactlyOnce, missing, duplicated] = (["once", "missing", "duplicated"] as const).map(
    (v) => verdicts.filter((x) => x === v).length,
  );
  const jobsIn = (counts: Map<string, number>) => [...counts.values()].filter((n) => n > 0).length;
  const { ends, eventsRead } = onLog;
  // The embedded mock broker keeps a bounded log per partition and drops its oldest records past it.
  const trimmed = ends.reduce((sum, p) => sum + Number(p.low), 0);
  ctx.log(
    `audit: ${eventsRead} events read; of ${jobIds.length} jobs ${exactlyOnce} once, ${missing} missing, ${duplicated} duplicated; ` +
      `${jobsIn(onLog.counts)} on the log, ${inArchive ? `${jobsIn(inArchive)} in the archive` : "no archive"}; ` +
      `${trimmed} events no longer on the log (low offsets ${ends.map((p) => p.low).join(", ")})`,
  );
  // What the read model says of a few jobs without exactly one event, to tell a lost event from a lost read.
  for (const id of jobIds.filter((id) => verdict(id) !== "once").slice(0, 5)) {
    const state = await ctx.redis.hmget(`job:state:${id}`, "status", "audited", "attempts", "worker_id", "run_id", "completed_at");
    const { log, archived } = copies(id);
    ctx.log(`audit: job ${id}: ${log} events on the log, ${archived} in the archive; status ${state[0]}, audited ${state[1]}, attempts ${state[2]}, worker ${state[3]}, run ${state[4]}, completed ${state[5]}`);
  }
  return {
    jobs: jobIds.length,
    exactlyOnce,
    missing,
    duplicated,
    eventsRead,
    trimmed,
    onLog: jobsIn(onLog.counts),
    inArchive: inArchive && jobsIn(inArchive),
  };
}

/** The events of `jobIds` on the topic, through a throw-away group up to the ends it had at the start. */
async function countOnLog(ctx: BenchContext, jobIds: string[]) {
  const counts = new Map(jobIds.map((id) => [id, 0]));
  const ends = await ctx.admin.fetchTopicOffsets(TOPICS.completed.name);
  const remaining = new Map(ends.filter((p) => Number(p.high) > Number(p.low)).map((p) => [p.partition, Number(p.high)]));
  const consumer = ctx.kafka.consumer({ groupId: `bench-audit-${randomUUID()}`, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  let eventsRead = 0;
  await consumer.connect();
  await consumer.subscribe({ topic: TOPICS.completed.name, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        eventsRead++;
        const id = jobIdOf(message.value?.toString("utf8"));
        if (id && counts.has(id)) counts.set(id, counts.get(id)! + 1);
        if (Number(message.offset) + 1 >= (remaining.get(batch.partition) ?? Infinity)) remaining.delete(batch.partition);
      }
    },
  });
  const deadline = Date.now() + 120_000;
  while (remaining.size > 0 && Date.now() < deadline) await sleep(100);
  await consumer.disconnect();
  return { counts, ends, eventsRead };
}

/** The lines of `jobIds` in the audit archive. */
async function countInArchive(dir: string, jobIds: string[]): Promise<Map<string, number>> {
  const counts = new Map(jobIds.map((id) => [id, 0]));
  // Imported when there is an archive: BENCH_AB runs this harness on commits older than it.
  const { readAuditArchive } = await import("../../../lib/jobs/audit-archive");
  await readAuditArchive(dir, (line) => {
    const id = jobIdOf(line);
    if (id && counts.has(id)) counts.set(id, counts.get(id)! + 1);
  });
  return counts;
}

function jobIdOf(value: string | undefined): string | undefined {
  try {
    return (JSON.parse(value ?? "{}") as { job_id?: string }).job_id;
  } catch {
    return undefined; // a line a crash cut short
  }
}
