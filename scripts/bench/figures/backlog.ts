import { jobKeys } from "../../../lib/jobs/keys";
import { consumerLag, startWorkers, type BenchContext } from "../lib/context";
import { redisCommandStats, redisForks, watchProcesses, withoutAofRewrite, type ProcUsage, watchMachine, type MachineStall } from "../lib/proc";
import { sleep, summarize } from "../lib/stats";

export interface DrainRun {
  workers: number;
  jobs: number;
  /** Worker spawn → last job completed (includes process start-up and joining the group). */
  fromSpawnMs: number;
  /** First job started → last job completed. */
  processingMs: number;
  jobsPerSecond: number;
  /** Consumer lag sampled every 500 ms, t in ms since the workers were spawned. */
  lag: { t: number; lag: number }[];
  statuses: Record<string, number>;
  /** Jobs that needed more than one attempt. */
  retried: number;
  /** Jobs completed per worker id. */
  perWorker: Record<string, number>;
  procs: Record<string, ProcUsage>;
  /** The partitions each worker held when the backlog was drained (from their presence beats). */
  assignments: Record<string, number[]>;
  /** Per job: attempt start → completed (median, ms). */
  jobMs: number;
  /** On one partition: a job completed → the next job started (median and p90, ms): the consumer's cycle. */
  handoverMs: { p50: number; p90: number };
  /** Forks of Redis during the drain: AOF rewrites, whose CPU counts as Redis's (absent in older results). */
  redisForks?: number;
  /**
   * Pauses of at least STALL_MS in which no job of the drain completed, ms each (absent in older
   * results). On the embedded broker a worker joining a group that already works stops the group
   * for its session timeout less a second (librdkafka's mock coordinator), 5 s here.
   */
  stallsMs?: number[];
  /** Steal and pressure stalls of the whole machine during the drain (absent in older results). */
  machine?: MachineStall;
}

/** A gap between two consecutive completions this long is a stall, not the consumer's cycle. */
const STALL_MS = 1000;

const FAST_MODEL = { LOCAL_MODEL_TOKENS_PER_SECOND: "100000" };

/**
 * Figure 4: drains a backlog that is already on the log with `count` fresh worker processes and
 * a fast model, sampling consumer lag (committed offsets vs high watermarks) until it is zero.
 */
export async function drainBacklog(
  ctx: BenchContext,
  jobIds: string[],
  count: number,
  timeoutMs: number,
  env: Record<string, string> = {},
): Promise<DrainRun> {
  const drain = () => drainOnce(ctx, jobIds, count, timeoutMs, env);
  return ctx.stack.redis ? withoutAofRewrite(ctx.redis, drain) : drain();
}

async function drainOnce(
  ctx: BenchContext,
  jobIds: string[],
  count: number,
  timeoutMs: number,
  env: Record<string, string>,
): Promise<DrainRun> {
  const pids = (ws: ReturnType<typeof startWorkers>) => Object.fromEntries(ws.workers.map((w) => [w.name, w.child.pid]));
  await ctx.redis.config("RESETSTAT");
  const forksBefore = await redisForks(ctx.redis);
  const set = startWorkers(ctx, count, { ...FAST_MODEL, ...env });
  const machineWatch = watchMachine();
  const watch = watchProcesses({ ...pids(set), web: ctx.stack.web.child.pid, redis: ctx.stack.redis?.pid, broker: ctx.stack.broker?.pid });
  const lag: DrainRun["lag"] = [];
  const deadline = Date.now() + timeoutMs;
  let procs: Record<string, ProcUsage> | undefined;
  let assignments: Record<string, number[]> = {};
  let redisForksDuring: number | undefined;
  let machine: MachineStall | undefined;
  try {
    for (;;) {
      const t = performance.now() - set.spawnedAt;
      const now = await consumerLag(ctx.admin).catch(() => NaN);
      lag.push({ t, lag: now });
      if (now === 0 || Date.now() > deadline) break;
      await sleep(500);
    }
    procs = watch.stop();
    machine = machineWatch.stop();
    redisForksDuring = (await redisForks(ctx.redis)) - forksBefore;
    ctx.log(`CPU during the drain: ${Object.entries(procs).map(([name, p]) => `${name} ${Math.round(p.cpuMs ?? NaN)} ms`).join(", ")}; Redis forks (AOF rewrites) ${redisForksDuring}; Redis commands: ${JSON.stringify(await redisCommandStats(ctx.redis))}`);
    assignments = await readAssignments(ctx, set.workers.map((w) => w.name));
  } finally {
    procs ??= watch.stop();
    await set.stop();
  }
  const states = await readStates(ctx, jobIds);
  const statuses: Record<string, number> = {};
  const perWorker: Record<string, number> = {};
  let firstStart = Infinity;
  let lastDone = -Infinity;
  let retried = 0;
  for (const s of states) {
    statuses[s.status ?? "MISSING"] = (statuses[s.status ?? "MISSING"] ?? 0) + 1;
    if (s.worker_id) perWorker[s.worker_id] = (perWorker[s.worker_id] ?? 0) + 1;
    if (Number(s.attempts) > 1) retried++;
    if (s.started_at) firstStart = Math.min(firstStart, Date.parse(s.started_at));
    if (s.completed_at) lastDone = Math.max(lastDone, Date.parse(s.completed_at));
  }
  const partitionOf = new Map(ctx.spread.map((t) => [t.id, t.partition]));
  const byPartition = new Map<number, { start: number; done: number }[]>();
  for (const s of states) {
    if (!s.started_at || !s.completed_at) continue;
    const partition = partitionOf.get(s.tenant_id ?? "") ?? -1;
    if (!byPartition.has(partition)) byPartition.set(partition, []);
    byPartition.get(partition)!.push({ start: Date.parse(s.started_at), done: Date.parse(s.completed_at) });
  }
  const handovers: number[] = [];
  const jobMs: number[] = [];
  for (const jobs of byPartition.values()) {
    jobs.sort((a, b) => a.start - b.start);
    jobs.forEach((job, i) => {
      jobMs.push(job.done - job.start);
      if (i > 0) handovers.push(job.start - jobs[i - 1].done);
    });
  }
  const handover = summarize(handovers);
  const completions = states
    .map((st) => Date.parse(st.completed_at ?? ""))
    .filter((t) => Number.isFinite(t))
    .sort((a, b) => a - b);
  const stallsMs: number[] = [];
  for (let i = 1; i < completions.length; i++)
    if (completions[i] - completions[i - 1] >= STALL_MS) stallsMs.push(completions[i] - completions[i - 1]);
  const spawnedWall = Date.now() - (performance.now() - set.spawnedAt);
  const processingMs = lastDone - firstStart;
  const run: DrainRun = {
    workers: count,
    jobs: jobIds.length,
    fromSpawnMs: lastDone - spawnedWall,
    processingMs,
    jobsPerSecond: jobIds.length / (processingMs / 1000),
    lag,
    statuses,
    retried,
    perWorker,
    procs,
    redisForks: redisForksDuring,
    assignments,
    jobMs: summarize(jobMs).p50,
    handoverMs: { p50: handover.p50, p90: handover.p90 },
    stallsMs,
    machine,
  };
  ctx.log(`drain with ${count} worker(s): ${jobIds.length} jobs in ${Math.round(processingMs)} ms (${Math.round(run.jobsPerSecond)} jobs/s), job ${run.jobMs} ms, handover p50 ${handover.p50} ms, pauses with no job completing ${JSON.stringify(stallsMs)} ms, machine ${JSON.stringify(machine)}, ${JSON.stringify(statuses)}`);
  return run;
}

async function readStates(ctx: BenchContext, jobIds: string[]) {
  const fields = ["status", "started_at", "completed_at", "attempts", "worker_id", "tenant_id"] as const;
  const out: Partial<Record<(typeof fields)[number], string>>[] = [];
  for (let i = 0; i < jobIds.length; i += 1000) {
    const pipeline = ctx.redis.pipeline();
    for (const id of jobIds.slice(i, i + 1000)) pipeline.hmget(jobKeys.state(id), ...fields);
    for (const [, values] of (await pipeline.exec()) ?? []) {
      const v = values as (string | null)[];
      out.push(Object.fromEntries(fields.map((f, k) => [f, v[k] ?? undefined])));
    }
  }
  return out;
}

async function readAssignments(ctx: BenchContext, workerIds: string[]): Promise<Record<string, number[]>> {
  const beats = await ctx.redis.hmget("workers:seen", ...workerIds);
  return Object.fromEntries(workerIds.map((id, i) => [id, beats[i] ? ((JSON.parse(beats[i]!) as { assignments: Record<string, number[]> }).assignments.generation ?? []) : []]));
}
