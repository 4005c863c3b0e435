import { jobKeys } from "../../../lib/jobs/keys";
import { startWorkers, type BenchContext, type Tenant } from "../lib/context";
import { load } from "../lib/load";
import { rssMb, processTree, watchProcesses } from "../lib/proc";
import { sleep, summarize, type Summary } from "../lib/stats";

/** The final statuses, spelled here: BENCH_AB copies this harness onto older commits, which lack lib/jobs/status.ts. */
const isFinalJob = (status: string | null | undefined) => status === "COMPLETED" || status === "FAILED" || status === "CANCELLED";

/** At temperature 0 local-ngram continues this cycle without a natural end: every job runs its full max_tokens. */
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();
/** The model's pace in these figures, as a hosted model streams. */
const TOKENS_PER_SECOND = 40;

/** Submits `count` jobs of the tenants in turn over HTTP (50 connections) and returns their ids. */
export async function submitMany(ctx: BenchContext, tenants: Tenant[], count: number, maxTokens: number): Promise<string[]> {
  const ids: string[] = [];
  const requests = tenants.map((tenant) => ({
    method: "POST" as const,
    path: "/v1/jobs",
    headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
    body: JSON.stringify({ tenant_id: tenant.id, model_name: "local-ngram", prompt: CYCLE, temperature: 0, max_tokens: maxTokens }),
    onResponse: (status: number, body: string) => {
      if (status === 202) ids.push((JSON.parse(body) as { job_id: string }).job_id);
    },
  }));
  const result = await load({ url: ctx.url, amount: count, requests });
  if (ids.length !== count) throw new Error(`submitted ${ids.length} of ${count} jobs (${JSON.stringify(result.statusCodes)})`);
  return ids;
}

async function readField(ctx: BenchContext, ids: string[], field: string): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let i = 0; i < ids.length; i += 1000) {
    const pipeline = ctx.redis.pipeline();
    for (const id of ids.slice(i, i + 1000)) pipeline.hget(jobKeys.state(id), field);
    for (const [, value] of (await pipeline.exec()) ?? []) out.push(value as string | null);
  }
  return out;
}

export interface RealisticDrain {
  concurrency: number;
  jobs: number;
  tenants: number;
  maxTokens: number;
  tokensPerSecond: number;
  /** jobs × (max_tokens ÷ tokens/s) ÷ concurrency. */
  idealMs: number;
  /** First job started → last job completed. */
  drainMs: number;
  ratio: number;
  /** What one job at a time per partition (the first build) needed, computed: jobs × job time ÷ partitions. */
  partitionBoundMs: number;
  /** First job started → last job started. */
  startSpreadMs: number;
  /** Most jobs RUNNING at once (sampled every 250 ms). */
  peakRunning: number;
  /** Median of a job's own duration (attempt start → completed), against max_tokens ÷ tokens/s. */
  jobMs: number;
  statuses: Record<string, number>;
  workerCpuPct: number;
}

/**
 * Drain at a realistic pace: `jobs` jobs of `maxTokens` tokens at 40 tokens/s from `tenants`
 * tenants, already on the log, drained by one worker running `concurrency` jobs at once.
 */
export async function drainAtPace(ctx: BenchContext, tenants: Tenant[], jobs: number, maxTokens: number, concurrency: number): Promise<RealisticDrain> {
  const ids = await submitMany(ctx, tenants, jobs, maxTokens);
  // The ideal counts the worker's concurrency as the only limit, so no tenant's cap may bind first.
  const set = startWorkers(ctx, 1, { LOCAL_MODEL_TOKENS_PER_SECOND: String(TOKENS_PER_SECOND), WORKER_CONCURRENCY: String(concurrency), TENANT_CONCURRENCY: String(concurrency) });
  const watch = watchProcesses({ worker: set.workers[0].child.pid });
  let procs: ReturnType<typeof watch.stop> = {};
  let peakRunning = 0;
  let statuses: (string | null)[] = [];
  try {
    const deadline = Date.now() + 900_000;
    for (;;) {
      statuses = await readField(ctx, ids, "status");
      peakRunning = Math.max(peakRunning, statuses.filter((s) => s === "RUNNING").length);
      if (statuses.every(isFinalJob) || Date.now() > deadline) break;
      await sleep(250);
    }
  } finally {
    procs = watch.stop();
    await set.stop();
  }
  const [started, attemptStarted, completed] = await Promise.all([readField(ctx, ids, "started_at"), readField(ctx, ids, "attempt_started_at"), readField(ctx, ids, "completed_at")]);
  const firstStart = Math.min(...started.filter(Boolean).map((s) => Date.parse(s!)));
  const lastStart = Math.max(...started.filter(Boolean).map((s) => Date.parse(s!)));
  const lastDone = Math.max(...completed.filter(Boolean).map((s) => Date.parse(s!)));
  const jobSeconds = maxTokens / TOKENS_PER_SECOND;
  const idealMs = (jobs * jobSeconds * 1000) / concurrency;
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[s ?? "MISSING"] = (counts[s ?? "MISSING"] ?? 0) + 1;
  const jobMs = summarize(attemptStarted.map((s, i) => (s && completed[i] ? Date.parse(completed[i]!) - Date.parse(s) : NaN)).filter(Number.isFinite)).p50;
  const run: RealisticDrain = {
    concurrency,
    jobs,
    tenants: tenants.length,
    maxTokens,
    tokensPerSecond: TOKENS_PER_SECOND,
    idealMs,
    drainMs: lastDone - firstStart,
    ratio: (lastDone - firstStart) / idealMs,
    startSpreadMs: lastStart - firstStart,
    partitionBoundMs: (jobs * jobSeconds * 1000) / 6,
    peakRunning,
    jobMs,
    statuses: counts,
    workerCpuPct: procs.worker?.cpuPct ?? NaN,
  };
  ctx.log(`drain at ${TOKENS_PER_SECOND} tokens/s, concurrency ${concurrency}: ${Math.round(run.drainMs)} ms vs ideal ${Math.round(idealMs)} ms (${run.ratio.toFixed(2)}×), peak ${peakRunning} running, starts over ${run.startSpreadMs} ms, job ${jobMs} ms, ${JSON.stringify(counts)}`);
  return run;
}

export interface FairnessRun {
  flood: number;
  floodTenant: string;
  loneTenant: string;
  partition: number;
  /** Submission acknowledged → job started, per lone job (ms). */
  startMs: Summary;
  /** Flood jobs started when the last lone job started (the flood's cap). */
  floodStarted: number;
}

/**
 * Fairness: `flood` long jobs of one tenant fill its partition, then a tenant of the same partition
 * submits `samples` short jobs one after another; each one's wait from its 202 to its start.
 */
export async function measureFairness(ctx: BenchContext, floodTenant: Tenant, loneTenant: Tenant, flood: number, samples: number): Promise<FairnessRun & { floodIds: string[] }> {
  if (floodTenant.partition !== loneTenant.partition) throw new Error("the two tenants must share a partition");
  const set = startWorkers(ctx, 1, { LOCAL_MODEL_TOKENS_PER_SECOND: String(TOKENS_PER_SECOND) });
  await set.ready;
  const floodIds = await submitMany(ctx, [floodTenant], flood, 4000);
  // The flood is on the log and in the worker's window before the lone tenant comes.
  await waitForBuffered(ctx, set.workers[0].name, flood - 16);
  const waits: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const response = await fetch(`${ctx.url}/v1/jobs`, {
        method: "POST",
        headers: { authorization: `Bearer ${loneTenant.key}`, "content-type": "application/json" },
        body: JSON.stringify({ tenant_id: loneTenant.id, model_name: "local-ngram", prompt: CYCLE, temperature: 0, max_tokens: 2 }),
      });
      const { job_id: id } = (await response.json()) as { job_id: string };
      const ackedAt = Date.now();
      const deadline = Date.now() + 60_000;
      let started: string | null = null;
      while (!started && Date.now() < deadline) {
        started = await ctx.redis.hget(jobKeys.state(id), "started_at");
        if (!started) await sleep(5);
      }
      if (!started) throw new Error(`lone job ${id} did not start within 60 s`);
      waits.push(Math.max(0, Date.parse(started) - ackedAt));
      // Let it finish, so each sample starts with the lone tenant idle.
      while (!isFinalJob(await ctx.redis.hget(jobKeys.state(id), "status"))) await sleep(10);
    }
    const floodStarted = (await readField(ctx, floodIds, "started_at")).filter(Boolean).length;
    const run = { flood, floodTenant: floodTenant.id, loneTenant: loneTenant.id, partition: floodTenant.partition, startMs: summarize(waits), floodStarted, floodIds };
    ctx.log(`fairness: behind ${flood} flood jobs, a lone job starts p50 ${run.startMs.p50} ms p99 ${run.startMs.p99} ms (${samples} samples; ${floodStarted} flood jobs started)`);
    return run;
  } finally {
    await set.stop();
  }
}

async function waitForBuffered(ctx: BenchContext, workerId: string, atLeast: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const raw = await ctx.redis.hget("workers:seen", workerId);
    const windows = raw ? ((JSON.parse(raw) as { stats?: { generation?: { windows: { buffered: number }[] } } }).stats?.generation?.windows ?? []) : [];
    if (windows.reduce((sum, w) => sum + w.buffered, 0) >= atLeast) return;
    await sleep(100);
  }
  throw new Error(`the worker did not buffer ${atLeast} messages within 120 s`);
}

export interface MemoryRun {
  backlog: number;
  maxBuffered: number;
  /** Messages in the worker's windows once its fetches paused. */
  buffered: number;
  rssMb: number;
}

/**
 * Memory: a worker facing a backlog of `backlog` long jobs reads ahead until its windows are full
 * (MAX_BUFFERED_PER_PARTITION each) and pauses; its RSS then, for each window size.
 */
export async function measureMemory(ctx: BenchContext, backlog: number, maxBuffered: number): Promise<MemoryRun> {
  const set = startWorkers(ctx, 1, { LOCAL_MODEL_TOKENS_PER_SECOND: String(TOKENS_PER_SECOND), MAX_BUFFERED_PER_PARTITION: String(maxBuffered), WORKER_CONCURRENCY: "64" });
  try {
    await set.ready;
    const name = set.workers[0].name;
    let buffered = 0;
    let steady = 0;
    const deadline = Date.now() + 300_000;
    // Buffered stops growing once every window is full (or the backlog is all read).
    while (Date.now() < deadline && steady < 8) {
      await sleep(500);
      const raw = await ctx.redis.hget("workers:seen", name);
      const windows = raw ? ((JSON.parse(raw) as { stats?: { generation?: { windows: { buffered: number }[] } } }).stats?.generation?.windows ?? []) : [];
      const now = windows.reduce((sum, w) => sum + w.buffered, 0);
      steady = now > 0 && now === buffered ? steady + 1 : 0;
      buffered = now;
    }
    const rss = rssMb(processTree(set.workers[0].child.pid!));
    const run = { backlog, maxBuffered, buffered, rssMb: rss };
    ctx.log(`memory: backlog ${backlog}, window ${maxBuffered}/partition → ${buffered} buffered, worker RSS ${rss.toFixed(0)} MB`);
    return run;
  } finally {
    await set.stop();
  }
}
