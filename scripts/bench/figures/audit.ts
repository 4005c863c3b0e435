import { randomUUID } from "node:crypto";
import { TOPICS } from "../../../lib/topics";
import type { BenchContext } from "../lib/context";
import { sleep } from "../lib/stats";

export interface AuditCheck {
  jobs: number;
  /** Jobs with exactly one event on ai.generation.completed. */
  exactlyOnce: number;
  missing: number;
  duplicated: number;
  eventsRead: number;
  /** Events the broker no longer has: the embedded mock broker keeps a bounded log per partition. */
  trimmed: number;
}

/** Reads the whole audit topic and counts the completed events of `jobIds`: one each is the contract. */
export async function checkAudit(ctx: BenchContext, jobIds: string[]): Promise<AuditCheck> {
  const wanted = new Map(jobIds.map((id) => [id, 0]));
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
        const id = (JSON.parse(message.value?.toString("utf8") ?? "{}") as { job_id?: string }).job_id;
        if (id && wanted.has(id)) wanted.set(id, wanted.get(id)! + 1);
        if (Number(message.offset) + 1 >= (remaining.get(batch.partition) ?? Infinity)) remaining.delete(batch.partition);
      }
    },
  });
  const deadline = Date.now() + 120_000;
  while (remaining.size > 0 && Date.now() < deadline) await sleep(100);
  await consumer.disconnect();
  let exactlyOnce = 0;
  let missing = 0;
  let duplicated = 0;
  for (const n of wanted.values()) {
    if (n === 1) exactlyOnce++;
    else if (n === 0) missing++;
    else duplicated++;
  }
  // The embedded mock broker keeps a bounded log per partition and drops its oldest records past it.
  const trimmed = ends.reduce((sum, p) => sum + Number(p.low), 0);
  ctx.log(`audit: ${eventsRead} events read; of ${jobIds.length} jobs ${exactlyOnce} once, ${missing} missing, ${duplicated} duplicated; ${trimmed} events no longer on the log (low offsets ${ends.map((p) => p.low).join(", ")})`);
  // What the read model says of a few jobs without exactly one event, to tell a lost event from a lost read.
  for (const [id] of [...wanted].filter(([, n]) => n !== 1).slice(0, 5)) {
    const state = await ctx.redis.hmget(`job:state:${id}`, "status", "audited", "attempts", "worker_id", "run_id", "completed_at");
    ctx.log(`audit: job ${id}: ${wanted.get(id)} events; status ${state[0]}, audited ${state[1]}, attempts ${state[2]}, worker ${state[3]}, run ${state[4]}, completed ${state[5]}`);
  }
  return { jobs: jobIds.length, exactlyOnce, missing, duplicated, eventsRead, trimmed };
}
