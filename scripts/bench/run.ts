/**
 * `npm run bench`: starts the real stack (production build; embedded Redis and broker unless
 * REDIS_URL / KAFKA_BROKERS are set), measures it, and writes BENCHMARKS.md. Every figure that
 * matters is a ratio against a baseline measured in the same run, because timings drift on a
 * shared machine. Sizes scale with BENCH_SCALE (1 = the issue's sizes). Nothing here fails CI.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Partitioners } from "kafkajs";
import { createKafka } from "../../lib/kafka";
import { createRedis } from "../../lib/redis";
import { TOPICS } from "../../lib/topics";
import { buildIfStale } from "../lib/build";
import { freePort } from "../lib/redis-server";
import { startStack } from "../lib/stack";
import { runAB } from "./ab";
import { checkAudit } from "./figures/audit";
import { drainAtPace, measureFairness, measureMemory, submitMany } from "./figures/concurrency";
import { drainBacklog } from "./figures/backlog";
import { measureFanOut } from "./figures/fan-out";
import { measureFirstToken } from "./figures/first-token";
import { measureRawLimits } from "./figures/raw-limits";
import { measureReelFlow } from "./figures/reel-flow";
import { freshBroker, measureSubmit, warmUp } from "./figures/submit";
import { measureStreamShapes } from "./figures/stream-shapes";
import { measureUsageCost } from "./figures/usage-cost";
import { recordBatches, type BenchContext, type Tenant } from "./lib/context";
import { describeMachine, loadAverage } from "./lib/machine";
import { benchSizes } from "./lib/sizes";
import { renderReport, type Results } from "./report";

const root = path.resolve(__dirname, "../..");
const benchDir = path.join(root, ".bench-data");
/** The stack's data (Redis AOF, sandbox videos, logs), new for every run. */
const dataDir = path.join(benchDir, "run");
const started = Date.now();
const log = (message: string) =>
  process.stdout.write(`[bench +${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

/** Tenants named so that, keyed by tenant, their jobs land `perPartition` on each partition. */
function spreadTenants(perPartition: number): Tenant[] {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: TOPICS.requests.partitions }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
  }));
  const counts = new Array<number>(TOPICS.requests.partitions).fill(0);
  const tenants: Tenant[] = [];
  for (let i = 0; tenants.length < perPartition * TOPICS.requests.partitions; i++) {
    const id = `bench-${i}`;
    const partition = partitioner({
      topic: TOPICS.requests.name,
      partitionMetadata,
      message: { key: id, value: null },
    });
    if (counts[partition] >= perPartition) continue;
    counts[partition]++;
    tenants.push({ id, key: `bk_${randomBytes(18).toString("base64url")}`, partition });
  }
  return tenants.sort((a, b) => a.partition - b.partition);
}

/** buildIfStale, waiting while someone else's `next build` holds the build directory. */
async function build(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return buildIfStale(root);
    } catch (error) {
      if (attempt >= 30) throw error;
      log("next build failed (another build running?); trying again in 10 s");
      await new Promise((r) => setTimeout(r, 10_000));
    }
  }
}

/** The figures a full run measures, in order; BENCH_ONLY names some of them. */
const ALL_FIGURES = "raw,submit,usage,ttft,responses,fanout-worker,shapes,fanout,reel,concurrency";

async function main() {
  const size = benchSizes();
  const loadBefore = loadAverage();
  const machine = describeMachine(root);
  log(
    `machine: ${machine.nproc} cpus, ${machine.cpuModel}, load ${loadBefore.join(" ")}; sizes ${JSON.stringify(size)}`,
  );
  await build();

  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const demo: Tenant = { id: "demo", key: `dk_${randomBytes(24).toString("base64url")}`, partition: -1 };
  const spread = spreadTenants(4);
  const reelAccount = { id: "1784140000000042", token: `SANDBOX${randomBytes(20).toString("hex")}` };
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    "GRAPH_URL",
    "API_KEYS",
    "REEL_ACCOUNTS",
    "LLM_BASE_URL",
    "DATA_DIR",
    "PORT",
    "WORKERS",
    "WORKER_CONCURRENCY",
    "TENANT_CONCURRENCY",
    "MAX_BUFFERED_PER_PARTITION",
    "LOCAL_MODEL_TOKENS_PER_SECOND",
    "REEL_POLL_INTERVAL_MS",
    "REEL_POLL_ATTEMPTS",
    "SANDBOX_PROCESSING_MS",
  ])
    delete env[name];
  Object.assign(env, {
    PORT: String(await freePort()),
    WORKERS: "1",
    API_KEYS: [demo, ...spread].map((t) => `${t.id}:${t.key}`).join(","),
    REEL_ACCOUNTS: `demo:${reelAccount.id}:${reelAccount.token}`,
    // The limiter still runs on every submission (its Redis round trip is measured); it never refuses here.
    RATE_LIMIT_PER_MINUTE: "1000000000",
    // The "all at once" fan-out opens 500 streams of one tenant; the per-tenant cap would refuse them.
    MAX_STREAMS_PER_TENANT: "100000",
    ALLOW_PRIVATE_URLS: "true",
    NEXT_TELEMETRY_DISABLED: "1",
    BENCH_FLOOR_ROUTE: "1",
  });
  // BENCH_PROFILE=1: every Node process of the stack writes a CPU profile to .bench-data/profiles when it exits.
  if (process.env.BENCH_PROFILE) {
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ""} --import ${path.join(__dirname, "lib/cpu-profile.mjs")}`.trim();
    env.BENCH_PROFILE_DIR = path.join(benchDir, "profiles");
  }

  log("starting the stack (next start, Redis, broker, one worker)");
  const stack = await startStack({ root, dataDir, env, output: { file: path.join(dataDir, "stack.log") } });
  const kafka = createKafka(String(stack.env.KAFKA_BROKERS).split(","), "dispatch-bench");
  const admin = kafka.admin();
  const redis = createRedis(String(stack.env.REDIS_URL));
  const ctx: BenchContext = {
    root,
    dataDir,
    stack,
    url: stack.url,
    demo,
    spread,
    redis,
    kafka,
    admin,
    reelAccount,
    scale: size.scale,
    log,
  };
  const results: Partial<Results> & { errors: { figure: string; message: string }[] } = { errors: [] };
  const figure = async <T>(name: string, run: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await run();
    } catch (error) {
      log(`${name} failed: ${error instanceof Error ? error.stack : String(error)}`);
      results.errors.push({ figure: name, message: error instanceof Error ? error.message : String(error) });
      return undefined;
    }
  };

  let stopping = false;
  const stopAll = async () => {
    if (stopping) return;
    stopping = true;
    await admin.disconnect().catch(() => {});
    redis.disconnect();
    await stack.stop();
  };
  process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));
  try {
    await admin.connect();
    // The burst and the backlog run with no worker: the stack's own is stopped until a figure needs one.
    await stack.workers[0].stop();

    const only = new Set((process.env.BENCH_ONLY ?? ALL_FIGURES).split(","));
    if (only.has("raw")) results.raw = await figure("raw limits", () => measureRawLimits(ctx, size.rawSeconds));
    if (only.has("submit")) await figure("warm-up", () => warmUp(ctx));
    results.submits = [];
    results.drains = [];
    const backlogIds: string[] = [];
    // BENCH_DRAIN_WORKERS=0 measures one burst and drains nothing.
    for (const workers of only.has("submit") ? size.backlogWorkers : []) {
      // Each burst and drain on a new embedded broker: its fetches slow as its log grows, which made
      // whichever drain ran later the slower (the 2- and 4-worker drains ran after the 1-worker one).
      await figure("a new broker", () => freshBroker(ctx));
      log(`burst of ${size.backlog} submissions${workers ? `, then drain with ${workers} worker(s)` : ""}`);
      const submitted = await figure(`submit (${workers})`, () =>
        measureSubmit(ctx, size.backlog, size.backlogMaxTokens),
      );
      if (!submitted) continue;
      const batches = await figure("record batches", () =>
        recordBatches(ctx, TOPICS.requests.name, submitted.jobIds.length),
      );
      if (batches)
        log(`the backlog is in ${batches} record batches, ${(submitted.jobIds.length / batches).toFixed(1)} jobs each`);
      results.submits.push({
        floor: submitted.floor,
        submit: submitted.submit,
        jobs: submitted.jobIds.length,
        procs: submitted.procs,
        recordBatches: batches,
      });
      if (!workers) continue;
      backlogIds.push(...submitted.jobIds);
      const drained = await figure(`drain (${workers})`, () => drainBacklog(ctx, submitted.jobIds, workers, 600_000));
      if (drained) results.drains.push(drained);
    }
    if (only.has("usage")) {
      log(`usage aggregates on and off: ${size.usageRounds} round(s) of ${size.backlog} jobs each way, one worker`);
      const cost = await figure("usage cost", () => measureUsageCost(ctx, size.backlog, size.usageRounds));
      if (cost) {
        log(`usage aggregates slow the drain by ${cost.drainSlowdownPct.toFixed(1)} % (median of ${size.usageRounds})`);
        results.usageCost = cost;
      }
    }
    if (only.has("ttft")) {
      log("time to first token");
      results.firstToken = await figure("first token", () => measureFirstToken(ctx, size.firstTokenSamples));
      // The same with the worker's long-poll at the default for a real cluster, where the broker would
      // answer the waiting fetch at once: what the embedded default cost before it shortened the wait.
      results.firstTokenDefaultWait = await figure("first token, default wait", () =>
        measureFirstToken(ctx, size.firstTokenSamples, 50),
      );
    }
    if (only.has("responses")) {
      log("time to first token through /v1/responses against /jobs/{id}/stream");
      results.responsesFirstToken = await figure("responses first token", async () =>
        // Imported when measured: BENCH_AB runs this harness on commits older than /v1/responses.
        (await import("./figures/responses-first-token")).measureResponsesFirstToken(ctx, size.firstTokenSamples),
      );
    }
    results.fanOut = [];
    for (const n of only.has("fanout-worker") ? size.fanOutWorker : []) {
      log(`fan-out through Kafka and a real worker: ${n} jobs streaming at once`);
      const tps = size.fanOutWorkerTokensPerSecond;
      const viaWorker = await figure(`fan-out worker ${n}`, () =>
        measureFanOut(ctx, "worker", n, tps * size.fanOutSeconds, tps),
      );
      if (viaWorker) results.fanOut.push(viaWorker);
    }
    if (only.has("shapes")) {
      // At the worker fan-out's largest load: the Redis shape of a job's stream, as it is and as one
      // Redis Stream per job (the shape issue 24's commands-per-delta goal points to).
      const n = Math.max(...size.fanOutWorker);
      log(
        `stream shapes: ${n} streams at ${size.fanOutWorkerTokensPerSecond} tokens/s, list + channel against one Redis Stream a job`,
      );
      results.streamShapes = await figure("stream shapes", () =>
        measureStreamShapes(ctx, n, size.fanOutWorkerTokensPerSecond, size.fanOutSeconds * 2, 2),
      );
    }
    for (const n of only.has("fanout") ? size.fanOut : []) {
      log(`fan-out: ${n} jobs streaming at once`);
      const run = await figure(`fan-out ${n}`, () =>
        measureFanOut(
          ctx,
          "concurrent",
          n,
          size.fanOutTokensPerSecond * size.fanOutSeconds,
          size.fanOutTokensPerSecond,
        ),
      );
      if (run) results.fanOut.push(run);
    }
    if (only.has("reel")) {
      log("reel flow");
      results.reel = await figure("reel flow", () =>
        measureReelFlow(ctx, size.reelShortIntervalMs, size.reelShortRuns),
      );
    }
    if (backlogIds.length) {
      log("audit log check");
      results.audit = await figure("audit", () => checkAudit(ctx, backlogIds));
    }
    // Last: the fairness flood and the memory backlog stay on the log.
    if (only.has("concurrency")) {
      const concurrency: NonNullable<Results["concurrency"]> = { drains: [], memory: [] };
      results.concurrency = concurrency;
      // 20 tenants over every partition: the tenants sorted by their rank within their partition.
      const byRank = [...spread].sort(
        (a, b) =>
          spread.filter((t) => t.partition === a.partition).indexOf(a) -
            spread.filter((t) => t.partition === b.partition).indexOf(b) || a.partition - b.partition,
      );
      for (const n of size.paceConcurrency) {
        log(`drain at a realistic pace, WORKER_CONCURRENCY ${n}`);
        const run = await figure(`drain at pace (${n})`, () =>
          drainAtPace(ctx, byRank.slice(0, 20), size.paceJobs, 100, n),
        );
        if (run) concurrency.drains.push(run);
      }
      log(`fairness behind a ${size.flood}-job flood`);
      const [floodTenant, loneTenant] = spread.filter((t) => t.partition === spread[0].partition);
      const fairness = await figure("fairness", () =>
        measureFairness(ctx, floodTenant, loneTenant, size.flood, size.fairnessSamples),
      );
      if (fairness) {
        const { floodIds, ...rest } = fairness;
        concurrency.fairness = rest;
        log(`memory: a backlog of ${size.memoryBacklog} jobs`);
        const filled = await figure("memory backlog", () =>
          submitMany(ctx, spread, size.memoryBacklog - floodIds.length, 4000),
        );
        for (const window of filled ? size.memoryWindows : []) {
          const run = await figure(`memory (${window})`, () => measureMemory(ctx, size.memoryBacklog, window));
          if (run) concurrency.memory.push(run);
        }
      }
    }
  } finally {
    await stopAll();
  }

  const final: Results = {
    ...(results as Results),
    date: new Date(started).toISOString(),
    command: [
      ...Object.entries(process.env)
        .filter(([k]) => k.startsWith("BENCH_") && k !== "BENCH_PROFILE_DIR")
        .map(([k, v]) => `${k}=${v}`),
      "npm run bench",
    ].join(" "),
    machine,
    loadBefore,
    loadAfter: loadAverage(),
    sizes: size,
    durationS: (Date.now() - started) / 1000,
    embedded: { redis: !!stack.redis, kafka: !!stack.broker },
  };
  writeFileSync(path.join(benchDir, "results.json"), JSON.stringify(final, null, 2));
  writeReport(final);
  log(`wrote BENCHMARKS.md (and .bench-data/results.json) in ${Math.round(final.durationS)} s`);
}

/** BENCHMARKS.md (and the lag plot) from a run's results, with BENCH_BASELINE's run as "before". */
function writeReport(results: Results): void {
  const baselinePath = process.env.BENCH_BASELINE;
  const baseline =
    baselinePath && existsSync(baselinePath) ? (JSON.parse(readFileSync(baselinePath, "utf8")) as Results) : undefined;
  const { markdown, files } = renderReport(results, baseline);
  // A partial run (BENCH_ONLY) must not replace the committed report of a full one.
  const outDir = process.env.BENCH_ONLY ? benchDir : root;
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(outDir, file)), { recursive: true });
    writeFileSync(path.join(outDir, file), content);
  }
  writeFileSync(path.join(outDir, "BENCHMARKS.md"), markdown);
}

// BENCH_RENDER=<results.json> writes the report of an earlier run again, without running anything;
// BENCH_AB=<commit> runs the figures on that commit and on this tree in turn (scripts/bench/ab.ts).
const rendering = process.env.BENCH_RENDER;
const otherCommit = process.env.BENCH_AB;
(rendering
  ? Promise.resolve(writeReport(JSON.parse(readFileSync(rendering, "utf8")) as Results))
  : otherCommit
    ? runAB(root, otherCommit, log)
    : main()
).then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
