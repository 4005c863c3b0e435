import { fork, type ChildProcess } from "node:child_process";
import { openSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { GenerationCommand } from "../../../lib/jobs/command";
import { jobKeys } from "../../../lib/jobs/keys";
import { createLocalNgram, readShippedCorpus } from "../../../lib/jobs/providers/local-ngram";
import { createSubscriber } from "../../../lib/redis";
import { auth, postJson, startWorkers, type BenchContext, type Tenant } from "../lib/context";
import { watchProcesses, type ProcUsage } from "../lib/proc";
import { openSse } from "../lib/sse-client";
import { sleep, summarize, type Summary } from "../lib/stats";

export interface FanOutRun {
  /** "worker": a real worker process consuming from Kafka; "concurrent": N jobs streaming at once. */
  mode: "worker" | "concurrent";
  n: number;
  maxTokens: number;
  tokensPerSecond: number;
  /** Delta messages the SSE clients received (the final message not counted). */
  deltas: number;
  /** The model's deltas (its pieces of text, about one per token) over all streams: what was offered. */
  expectedDeltas: number;
  /**
   * The model's deltas delivered. A message may carry several (the worker coalesces a job's deltas
   * while its previous message is being written; the message's `deltas` says how many).
   */
  modelDeltas?: number;
  /** Streams whose text arrived whole and in order. */
  wholeStreams?: number;
  /**
   * Each stream's pace against the model's: Σ (deltas − 1) ÷ tokens/s over Σ (last − first delta at
   * the client). 1.00× when every stream got its text as fast as the model made it; unlike
   * deltasPerSecond, not lowered by the time a worker takes to start N jobs from a backlog.
   */
  paceRatio?: number;
  /** Time from the first stream's first delta to the last stream's first delta, ms. */
  startSpreadMs?: number;
  /** First delta → last delta at the clients. */
  windowMs: number;
  /** The model's deltas delivered over windowMs (older runs: messages). */
  deltasPerSecond: number;
  /** Redis PUBLISH (seen by a direct subscriber in this process) → the same message at the SSE client, ms. */
  latency: Summary;
  /** Most jobs streaming at the same instant, from the clients' first and last delta times. */
  maxConcurrent: number;
  completedStreams: number;
  gapsOrDuplicates: number;
  procs: Record<string, ProcUsage>;
  /** This process's event-loop delay p99 (it timestamps both ends), ms. */
  benchLoopDelayP99: number;
  /** Redis commands (all clients, from INFO commandstats) per model delta delivered, and EXECs per delta. */
  redisCommandsPerDelta: number;
  execPerDelta: number;
  /** redisCommandsPerDelta by command (INFO commandstats names), the most called first. */
  redisCommandsByName?: Record<string, number>;
}

/**
 * Prompts tried in turn for the one whose continuation at temperature 0 runs to max_tokens: every
 * stream must last the whole window, and where the built-in model stops depends on its corpus (the
 * README and docs/, which change with the code). The first prompt ended after 22 tokens once the
 * README grew, and the figure then offered 200 streams for about a second, not five.
 */
const FAN_OUT_PROMPTS = ["Stream clients subscribe first", "Each job", "Dispatch publishes", "Kafka", "Workers in a consumer group"];

/**
 * The first of FAN_OUT_PROMPTS the shipped model continues to `maxTokens` without ending, with the
 * text it writes (the same in every job: temperature 0) and in how many deltas.
 */
async function longRunningPrompt(root: string, maxTokens: number): Promise<{ prompt: string; text: string; pieces: number }> {
  const model = createLocalNgram({ corpus: readShippedCorpus(root), tokensPerSecond: 1e9, sleep: async () => {} });
  for (const prompt of FAN_OUT_PROMPTS) {
    let finish: unknown;
    let text = "";
    let pieces = 0;
    for await (const chunk of model.generate({ model: "local-ngram", prompt, temperature: 0, maxTokens, signal: new AbortController().signal }))
      if ("finish_reason" in chunk) finish = chunk.finish_reason;
      else if ("delta" in chunk) {
        text += chunk.delta;
        pieces++;
      }
    // Older commits' model yields no finish chunk at all: only "stop" says the text ended early.
    if (finish !== "stop") return { prompt, text, pieces };
  }
  throw new Error(`none of the fan-out prompts runs to ${maxTokens} tokens at temperature 0: add one to FAN_OUT_PROMPTS`);
}
const STREAM_PREFIX = jobKeys.stream("");

/**
 * Figure 3: N jobs at LOCAL_MODEL_TOKENS_PER_SECOND each, one SSE client per job. In "worker" mode
 * one real worker consumes them from Kafka and runs all N at once (the real pipeline); in
 * "concurrent" mode the worker's per-job code runs all N at once in a separate process, no Kafka.
 */
export async function measureFanOut(ctx: BenchContext, mode: FanOutRun["mode"], n: number, maxTokens: number, tokensPerSecond: number): Promise<FanOutRun> {
  const tenants = mode === "worker" ? ctx.spread : [ctx.demo];
  const expected = await longRunningPrompt(ctx.root, maxTokens);
  const commands = await submitAll(ctx, n, tenants, maxTokens, expected.prompt);
  const tenantOf = new Map(commands.map((c) => [c.job_id, tenants.find((t) => t.id === c.tenant_id)!]));

  const published = new Map<string, number>();
  const received = new Map<string, number>();
  const firstAt = new Map<string, number>();
  const lastAt = new Map<string, number>();
  const texts = new Map<string, string>();
  const deltasOf = new Map<string, number>();
  let deltas = 0;
  let completedStreams = 0;
  let gapsOrDuplicates = 0;
  const streamErrors: string[] = [];

  const direct = createSubscriber(String(ctx.stack.env.REDIS_URL));
  const ids = new Set(commands.map((c) => c.job_id));
  direct.on("pmessage", (_pattern: string, channel: string, raw: string) => {
    const at = performance.now();
    const jobId = channel.slice(STREAM_PREFIX.length);
    if (ids.has(jobId)) published.set(`${jobId}|${(JSON.parse(raw) as { seq: number }).seq}`, at);
  });
  await direct.psubscribe(`${STREAM_PREFIX}*`);

  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const streams = commands.map((command) => {
    let lastSeq = 0;
    return openSse(
      `${ctx.url}/jobs/${command.job_id}/stream`,
      auth(tenantOf.get(command.job_id)!),
      (event) => {
        if (event.event === "error") {
          streamErrors.push(event.data);
          return;
        }
        const seq = event.id ?? 0;
        if (seq !== lastSeq + 1) gapsOrDuplicates++;
        lastSeq = seq;
        received.set(`${command.job_id}|${seq}`, event.at);
        const data = JSON.parse(event.data) as { is_final: boolean; delta: string; deltas?: number };
        if (data.is_final) {
          completedStreams++;
          return;
        }
        deltas++;
        texts.set(command.job_id, (texts.get(command.job_id) ?? "") + data.delta);
        // A message joining several of the model's deltas says how many (older trees: one each).
        deltasOf.set(command.job_id, (deltasOf.get(command.job_id) ?? 0) + (data.deltas ?? 1));
        if (!firstAt.has(command.job_id)) firstAt.set(command.job_id, event.at);
        lastAt.set(command.job_id, event.at);
      },
      agent,
    );
  });
  const closeClients = () => {
    for (const s of streams) s.close();
    agent.destroy();
    direct.disconnect();
  };
  try {
    const statuses = await Promise.all(streams.map((s) => s.opened));
    if (statuses.some((s) => s !== 200)) throw new Error(`stream answered ${statuses.find((s) => s !== 200)}`);
    await waitSubscribed(ctx, commands.map((c) => jobKeys.stream(c.job_id)));
  } catch (error) {
    closeClients();
    throw new Error(`${(error as Error).message}; ${streamErrors.length} streams sent an error event (${streamErrors[0] ?? ""})`);
  }

  // The worker runs every job at once (WORKER_CONCURRENCY and TENANT_CONCURRENCY ≥ n), as the generator does.
  const expectedMs = (maxTokens / tokensPerSecond) * 1000;
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  let stopRunner: () => Promise<void>;
  let watch: ReturnType<typeof watchProcesses>;
  if (mode === "worker") {
    const set = startWorkers(ctx, 1, { LOCAL_MODEL_TOKENS_PER_SECOND: String(tokensPerSecond), WORKER_CONCURRENCY: String(n), TENANT_CONCURRENCY: String(n) });
    await set.ready;
    stopRunner = () => set.stop();
    watch = watchProcesses({ worker: set.workers[0].child.pid, web: ctx.stack.web.child.pid, redis: ctx.stack.redis?.pid });
  } else {
    const generator = await startGenerator(ctx, tokensPerSecond);
    stopRunner = () => stopChild(generator);
    watch = watchProcesses({ generator: generator.pid, web: ctx.stack.web.child.pid, redis: ctx.stack.redis?.pid });
    generator.send({ type: "go", commands });
  }
  loopDelay.enable();
  const stats0 = await commandStats(ctx);
  const benchCpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.race([Promise.all(streams.map((s) => s.ended)), sleep(expectedMs * 4 + 30_000)]);
  const procs = watch.stop();
  const benchCpu = process.cpuUsage(benchCpu0);
  const stats1 = await commandStats(ctx);
  procs.bench = { cpuPct: ((benchCpu.user + benchCpu.system) / 1000 / (performance.now() - t0)) * 100, peakRssMb: process.memoryUsage().rss / 2 ** 20 };
  loopDelay.disable();
  closeClients();
  await stopRunner();

  const latencies: number[] = [];
  const samples: [number, number, string][] = [];
  for (const [key, at] of received) {
    const sent = published.get(key);
    if (sent === undefined) continue;
    latencies.push(at - sent);
    samples.push([Math.round(sent - t0), +(at - sent).toFixed(2), key]);
  }
  // Every sample (publish time since the start, latency, job|seq), for looking into the tail.
  writeFileSync(path.join(ctx.dataDir, `fan-out-${mode}-${n}.json`), JSON.stringify(samples));
  const starts = [...firstAt.values()];
  const ends = [...lastAt.values()];
  const windowMs = Math.max(...ends) - Math.min(...starts);
  const whole = commands.filter((c) => texts.get(c.job_id) === expected.text).map((c) => c.job_id);
  const modelDeltas = [...deltasOf.values()].reduce((sum, count) => sum + count, 0);
  const paced = whole.filter((id) => lastAt.get(id)! > firstAt.get(id)!);
  const paceRatio =
    (paced.length * (expected.pieces - 1) * (1000 / tokensPerSecond)) /
    paced.reduce((sum, id) => sum + lastAt.get(id)! - firstAt.get(id)!, 0);
  const run: FanOutRun = {
    mode,
    n,
    maxTokens,
    tokensPerSecond,
    deltas,
    expectedDeltas: n * expected.pieces,
    modelDeltas,
    wholeStreams: whole.length,
    paceRatio,
    startSpreadMs: Math.max(...starts) - Math.min(...starts),
    windowMs,
    deltasPerSecond: modelDeltas / (windowMs / 1000),
    latency: summarize(latencies),
    maxConcurrent: maxOverlap([...firstAt.keys()].map((id) => [firstAt.get(id)!, lastAt.get(id)!])),
    completedStreams,
    gapsOrDuplicates,
    procs,
    benchLoopDelayP99: loopDelay.percentile(99) / 1e6,
    redisCommandsPerDelta: (stats1.total - stats0.total) / modelDeltas,
    execPerDelta: (stats1.exec - stats0.exec) / deltas,
    redisCommandsByName: commandsPerDelta(stats0.byCommand, stats1.byCommand, modelDeltas),
  };
  ctx.log(
    `fan-out ${mode} N=${n}: ${modelDeltas}/${run.expectedDeltas} deltas in ${deltas} messages, ${whole.length} streams whole, ${Math.round(run.deltasPerSecond)}/s, pace ${paceRatio.toFixed(3)}, starts over ${Math.round(run.startSpreadMs!)} ms, latency p50 ${run.latency.p50.toFixed(1)} p99 ${run.latency.p99.toFixed(1)} ms, ` +
      `max ${run.maxConcurrent} at once, ${completedStreams} completed, ${run.redisCommandsPerDelta.toFixed(2)} Redis commands and ${run.execPerDelta.toFixed(2)} EXEC per delta, cpu ${Object.entries(procs).map(([k, v]) => `${k} ${Math.round(v.cpuPct)}%`).join(" ")}`,
  );
  ctx.log(`fan-out ${mode} N=${n}: Redis commands per delta by command: ${JSON.stringify(run.redisCommandsByName)}`);
  return run;
}

/** Calls of every Redis command so far (those scripts call included), in all and by command, and of EXEC (one per MULTI). */
export async function commandStats(ctx: BenchContext): Promise<{ total: number; exec: number; byCommand: Record<string, number> }> {
  const info = await ctx.redis.info("commandstats");
  let total = 0;
  const byCommand: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    total += Number(match[2]);
    byCommand[match[1]] = Number(match[2]);
  }
  return { total, exec: byCommand.exec ?? 0, byCommand };
}

/** Each command's calls between two readings per delta, the most called first. */
function commandsPerDelta(before: Record<string, number>, after: Record<string, number>, deltas: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([name, calls]) => [name, +((calls - (before[name] ?? 0)) / deltas).toFixed(3)] as const)
      .filter(([, perDelta]) => perDelta > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}

async function submitAll(ctx: BenchContext, n: number, tenants: Tenant[], maxTokens: number, prompt: string): Promise<GenerationCommand[]> {
  const commands: GenerationCommand[] = Array.from({ length: n }, (_, i) => ({
    job_id: crypto.randomUUID(),
    tenant_id: tenants[i % tenants.length].id,
    model_name: "local-ngram",
    prompt,
    temperature: 0,
    max_tokens: maxTokens,
    timestamp: new Date().toISOString(),
  }));
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < commands.length) {
        const command = commands[next++];
        const { status, body } = await postJson(ctx, "/v1/jobs", tenants.find((t) => t.id === command.tenant_id)!, command);
        if (status !== 202) throw new Error(`submit answered ${status}: ${JSON.stringify(body)}`);
      }
    }),
  );
  return commands;
}

/** Waits until the web server holds a subscription on every channel (PUBSUB NUMSUB). */
async function waitSubscribed(ctx: BenchContext, channels: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  let missing = 0;
  while (Date.now() < deadline) {
    missing = 0;
    for (let i = 0; i < channels.length; i += 500) {
      const reply = (await ctx.redis.call("PUBSUB", "NUMSUB", ...channels.slice(i, i + 500))) as (string | number)[];
      for (let k = 1; k < reply.length; k += 2) if (Number(reply[k]) < 1) missing++;
    }
    if (missing === 0) return;
    await sleep(100);
  }
  throw new Error(`the web server did not subscribe to ${missing} of ${channels.length} streams within 30 s`);
}

async function startGenerator(ctx: BenchContext, tokensPerSecond: number): Promise<ChildProcess> {
  const log = openSync(path.join(ctx.dataDir, "generator.log"), "a");
  const child = fork(path.join(__dirname, "../fan-out-generator.ts"), [], {
    cwd: ctx.root,
    execArgv: ["--import", "tsx"],
    env: { ...ctx.stack.env, LOCAL_MODEL_TOKENS_PER_SECOND: String(tokensPerSecond) },
    stdio: ["ignore", log, log, "ipc"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`the generator exited with code ${code}`)));
  });
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The most intervals that overlap at one instant. */
function maxOverlap(intervals: [number, number][]): number {
  const points = intervals.flatMap(([a, b]) => [[a, 1] as const, [b, -1] as const]).sort((x, y) => x[0] - y[0] || y[1] - x[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of points) most = Math.max(most, (now += d));
  return most;
}
