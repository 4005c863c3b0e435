import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AuditCheck } from "./figures/audit";
import type { DrainRun } from "./figures/backlog";
import type { FanOutRun } from "./figures/fan-out";
import type { StreamShapes } from "./figures/stream-shapes";
import type { SubmitRun } from "./figures/submit";
import type { FirstTokenResult } from "./figures/first-token";
import type { RawLimits } from "./figures/raw-limits";
import type { ReelFlowResult } from "./figures/reel-flow";
import type { ResponsesFirstTokenResult } from "./figures/responses-first-token";
import type { LoadResult } from "./lib/load";
import type { Machine } from "./lib/machine";
import { lineChartSvg } from "./lib/plot";
import { fmt, fmtRatio, median, ratio } from "./lib/stats";
import type { Sizes } from "./lib/sizes";
import type { FairnessRun, MemoryRun, RealisticDrain } from "./figures/concurrency";
import type { UsageCost } from "./figures/usage-cost";

export interface Results {
  date: string;
  command: string;
  machine: Machine;
  loadBefore: number[];
  loadAfter: number[];
  sizes: Sizes;
  durationS: number;
  embedded: { redis: boolean; kafka: boolean };
  raw?: RawLimits;
  /** `procs`: CPU of the stack's processes during the floor run and the submit run (absent in older results). */
  submits: {
    floor: LoadResult;
    submit: LoadResult;
    jobs: number;
    procs?: SubmitRun["procs"];
    /** Record batches the burst's commands went to the broker in (absent in older results). */
    recordBatches?: number;
  }[];
  drains: DrainRun[];
  firstToken?: FirstTokenResult;
  /** Figure 2 again with the worker's fetch long-poll at 50 ms, a real cluster's default. */
  firstTokenDefaultWait?: FirstTokenResult;
  responsesFirstToken?: ResponsesFirstTokenResult;
  fanOut: FanOutRun[];
  /** A job's stream as a replay list and a channel against one Redis Stream per job (absent in older results). */
  streamShapes?: StreamShapes;
  reel?: ReelFlowResult;
  audit?: AuditCheck;
  /** The backlog drain with the usage aggregates on and off (issue 25). */
  usageCost?: UsageCost;
  concurrency?: ConcurrencyResults;
  errors: { figure: string; message: string }[];
}

export interface ConcurrencyResults {
  drains: RealisticDrain[];
  fairness?: FairnessRun;
  memory: MemoryRun[];
}

const PLOT_SVG = "docs/benchmarks/backlog-lag.svg";
const PLOT_PNG = "docs/benchmarks/backlog-lag.png";
const mark = (ok: boolean | undefined) => (ok === undefined ? "–" : ok ? "✅ met" : "❌ not met");

/** The figures the before/after table compares: each one already relative to its own run's baseline where it can be. */
export function keyFigures(r: Results): { name: string; value: number; unit: string; better: "higher" | "lower" }[] {
  const out: { name: string; value: number; unit: string; better: "higher" | "lower" }[] = [];
  const s = submitSummary(r);
  if (s) {
    out.push({ name: "submit req/s ÷ floor req/s", value: s.rpsRatio, unit: "×", better: "higher" });
    out.push({ name: "submit p99 ÷ floor p99", value: s.p99Ratio, unit: "×", better: "lower" });
  }
  if (r.firstToken)
    out.push({
      name: "first token: added median latency",
      value: r.firstToken.pipeline.p50 - r.firstToken.direct.p50,
      unit: "ms",
      better: "lower",
    });
  const rt = r.responsesFirstToken;
  if (rt) {
    out.push({
      name: "first token: /v1/responses − /jobs/{id}/stream, median",
      value: rt.responses.p50 - rt.jobs.p50,
      unit: "ms",
      better: "lower",
    });
    out.push({
      name: "first token delivery: /v1/responses − /jobs/{id}/stream, median",
      value: rt.responsesDelivery.p50 - rt.jobsDelivery.p50,
      unit: "ms",
      better: "lower",
    });
  }
  for (const f of r.fanOut.filter((f) => f.mode === "concurrent")) {
    out.push({ name: `fan-out N=${f.n}: delivery p99`, value: f.latency.p99, unit: "ms", better: "lower" });
    out.push({
      name: `fan-out N=${f.n}: delivered ÷ offered deltas/s`,
      value: f.deltasPerSecond / (f.n * f.tokensPerSecond),
      unit: "×",
      better: "higher",
    });
    if (f.execPerDelta !== undefined)
      out.push({
        name: `fan-out N=${f.n}: Redis round trips (EXEC) per delta`,
        value: f.execPerDelta,
        unit: "",
        better: "lower",
      });
    if (f.procs.generator)
      out.push({
        name: `fan-out N=${f.n}: worker-side CPU per 1,000 deltas/s`,
        value: f.procs.generator.cpuPct / (f.deltasPerSecond / 1000),
        unit: "% core",
        better: "lower",
      });
    if (f.procs.redis)
      out.push({
        name: `fan-out N=${f.n}: Redis CPU per 1,000 deltas/s`,
        value: f.procs.redis.cpuPct / (f.deltasPerSecond / 1000),
        unit: "% core",
        better: "lower",
      });
    if (f.procs.web)
      out.push({
        name: `fan-out N=${f.n}: web CPU per 1,000 deltas/s`,
        value: f.procs.web.cpuPct / (f.deltasPerSecond / 1000),
        unit: "% core",
        better: "lower",
      });
  }
  const base = r.drains[0];
  for (const d of r.drains) {
    out.push({
      name: `backlog drain, ${d.workers} worker(s): jobs/s`,
      value: d.jobsPerSecond,
      unit: "jobs/s",
      better: "higher",
    });
    if (r.raw)
      out.push({
        name: `backlog drain, ${d.workers} worker(s): jobs/s per 1,000 bare-http req/s`,
        value: d.jobsPerSecond / (r.raw.bareHttp.rps / 1000),
        unit: "",
        better: "higher",
      });
    if (d !== base && base)
      out.push({
        name: `backlog scaling ${d.workers} ÷ ${base.workers} worker(s)`,
        value: d.jobsPerSecond / base.jobsPerSecond,
        unit: "×",
        better: "higher",
      });
  }
  return out;
}

function submitSummary(r: Results) {
  if (!r.submits.length) return undefined;
  const rps = median(r.submits.map((s) => s.submit.rps));
  const floorRps = median(r.submits.map((s) => s.floor.rps));
  return {
    rps,
    floorRps,
    p50: median(r.submits.map((s) => s.submit.p50)),
    p99: median(r.submits.map((s) => s.submit.p99)),
    floorP99: median(r.submits.map((s) => s.floor.p99)),
    rpsRatio: median(r.submits.map((s) => s.submit.rps / s.floor.rps)),
    p99Ratio: median(r.submits.map((s) => s.submit.p99 / s.floor.p99)),
  };
}

export function renderReport(
  r: Results,
  before?: Results,
): { markdown: string; files: Record<string, string | Buffer> } {
  const files: Record<string, string | Buffer> = {};
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);
  const s = submitSummary(r);
  const ft = r.firstToken;
  const fan200 =
    r.fanOut.find((f) => f.mode === "concurrent" && f.n === 200) ??
    r.fanOut.filter((f) => f.mode === "concurrent").at(-1);
  const d1 = r.drains[0];

  push(
    "# Benchmarks",
    "",
    "Generated by `npm run bench` (scripts/bench/run.ts); do not edit by hand. Timings drift on a shared machine, so",
    "every figure that matters is a ratio against a baseline measured in the same run. To compare two commits on one",
    "machine, `BENCH_AB=<commit> npm run bench` builds that commit in a worktree of its own and runs the chosen figures",
    "(BENCH_ONLY, default `submit`) on it and on the working tree in turn, BENCH_AB_ROUNDS times (default 2), and writes",
    "the ratios, round by round, to `.bench-data/ab.md` (scripts/bench/NOTES.md).",
    "",
    `- **Command:** \`${r.command}\``,
    `- **Date:** ${r.date} (took ${Math.round(r.durationS)} s)`,
    `- **Machine:** ${r.machine.nproc} CPUs (${r.machine.cpuModel}), ${fmt(r.machine.memoryGiB, 1)} GiB memory, ${r.machine.kernel}, Node ${r.machine.node}`,
    `- **Load average** (1/5/15 min): ${r.loadBefore.join(" / ")} at the start, ${r.loadAfter.join(" / ")} at the end (other engineers share the machine)`,
    `- **Code:** ${r.machine.commit}`,
    `- **Stack:** \`next start\` (production build), ${r.embedded.redis ? "embedded redis-server" : "REDIS_URL"}, ${r.embedded.kafka ? "embedded broker (librdkafka mock cluster)" : "KAFKA_BROKERS"}, workers started per figure as \`npm start\` starts them`,
    `- **Sizes** (BENCH_SCALE=${r.sizes.scale}): backlog ${r.sizes.backlog} jobs × drains with ${r.sizes.backlogWorkers.join(", ")} worker(s); ${r.sizes.firstTokenSamples} first-token samples;` +
      ` fan-out N = ${r.sizes.fanOut.join(", ")} for ${r.sizes.fanOutSeconds} s at ${r.sizes.fanOutTokensPerSecond} tokens/s, and N = ${(r.sizes.fanOutWorker ?? []).join(", ")} through Kafka and one real worker at ${r.sizes.fanOutWorkerTokensPerSecond ?? "–"} tokens/s; raw limits ${r.sizes.rawSeconds} s each`,
    "",
  );
  if (r.errors.length)
    push("**Figures that failed in this run:**", "", ...r.errors.map((e) => `- ${e.figure}: ${e.message}`), "");

  push(
    "## Summary",
    "",
    "| # | Figure | Measured | Baseline (same run) | Ratio | Goal | |",
    "|---|---|---|---|---|---|---|",
  );
  if (s) {
    push(
      `| 1 | POST /v1/jobs throughput, 50 connections | ${fmt(s.rps, 0)} req/s | floor route ${fmt(s.floorRps, 0)} req/s | ${fmtRatio(s.rpsRatio)} | ≥ 0.85× | ${mark(s.rpsRatio >= 0.85)} |`,
    );
    push(
      `| 1 | POST /v1/jobs p99 latency | ${fmt(s.p99, 0)} ms | floor route ${fmt(s.floorP99, 0)} ms | ${fmtRatio(s.p99Ratio)} | ≤ 1.30× | ${mark(s.p99Ratio <= 1.3)} |`,
    );
  }
  if (ft) {
    const added = ft.pipeline.p50 - ft.direct.p50;
    push(
      `| 2 | Time to first token, median${ft.fetchWaitMs ? ` (worker fetch wait ${ft.fetchWaitMs} ms)` : ""} | ${fmt(ft.pipeline.p50)} ms | model alone ${fmt(ft.direct.p50)} ms | +${fmt(added)} ms | ≤ +15 ms | ${mark(added <= 15)} |`,
    );
  }
  const dw = r.firstTokenDefaultWait;
  if (dw)
    push(
      `| 2 | Time to first token, median, worker fetch wait ${dw.fetchWaitMs} ms (a real cluster's default; the embedded broker waits it out) | ${fmt(dw.pipeline.p50)} ms | model alone ${fmt(dw.direct.p50)} ms | +${fmt(dw.pipeline.p50 - dw.direct.p50)} ms | | |`,
    );
  const rt = r.responsesFirstToken;
  if (rt) {
    const added = rt.responses.p50 - rt.jobs.p50;
    const addedDelivery = rt.responsesDelivery.p50 - rt.jobsDelivery.p50;
    const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${fmt(ms)} ms`;
    push(
      `| 2 | Time to first \`response.output_text.delta\` (POST /v1/responses, stream), median | ${fmt(rt.responses.p50)} ms | POST /v1/jobs + /jobs/{id}/stream ${fmt(rt.jobs.p50)} ms | ${signed(added)} | ≤ +2 ms | ${mark(added <= 2)} |`,
    );
    push(
      `| 2 | …of which after the worker's first token (delivery), median | ${fmt(rt.responsesDelivery.p50)} ms | /jobs/{id}/stream ${fmt(rt.jobsDelivery.p50)} ms | ${signed(addedDelivery)} | ≤ +2 ms | ${mark(addedDelivery <= 2)} |`,
    );
  }
  if (fan200) {
    push(
      `| 3 | ${fan200.n} jobs streaming at once: delivery p99 | ${fmt(fan200.latency.p99)} ms | – | – | ≤ 25 ms | ${mark(fan200.latency.p99 <= 25)} |`,
      `| 3 | ${fan200.n} jobs streaming at once: deltas/s delivered | ${fmt(fan200.deltasPerSecond, 0)} | offered ${fmt(fan200.n * fan200.tokensPerSecond, 0)} | ${fmtRatio(fan200.deltasPerSecond / (fan200.n * fan200.tokensPerSecond))} | 1.00× | |`,
    );
  }
  for (const f of r.fanOut.filter((f) => f.mode === "worker")) {
    const goal = f.n >= 500 ? 50 : f.n >= 200 ? 25 : undefined;
    push(
      `| 3 | ${f.n} jobs streaming at once through Kafka and a worker, ${f.tokensPerSecond} tokens/s: delivery p99 | ${fmt(f.latency.p99)} ms | p50 ${fmt(f.latency.p50)} ms; ${fmt(f.deltasPerSecond, 0)} of ${fmt(f.n * f.tokensPerSecond, 0)} deltas/s offered | – | ${goal ? `≤ ${goal} ms` : ""} | ${goal ? mark(f.latency.p99 <= goal) : ""} |`,
    );
    if (f.paceRatio !== undefined && f.n >= 500)
      push(
        `| 3 | …each stream's deltas delivered at the model's pace (${f.wholeStreams} of ${f.n} streams whole) | ${fmtRatio(f.paceRatio)} | ${f.tokensPerSecond} tokens/s; the ${f.n} jobs started over ${fmt(f.startSpreadMs, 0)} ms | ${fmtRatio(f.paceRatio)} | ≥ 0.98× | ${mark(f.paceRatio >= 0.98 && f.wholeStreams === f.n)} |`,
        `| 3 | …Redis commands per delta (${fmt(f.deltas / (f.modelDeltas ?? f.deltas), 2)} messages per delta) | ${fmt(f.redisCommandsPerDelta, 2)} | ${shapesNote(r.streamShapes)} | – | ≤ 1.5 | ${mark(f.redisCommandsPerDelta <= 1.5)} |`,
      );
  }
  if (d1) {
    for (const d of r.drains.slice(1)) {
      // Issue 24: on 2 cores a second worker must not make the drain slower; more are reported.
      const ratio = d.jobsPerSecond / d1.jobsPerSecond;
      const goal = d.workers === 2 ? ["≥ 1.00×", mark(ratio >= 1)] : ["(scaling)", ""];
      push(
        `| 4 | Backlog drain with ${d.workers} workers | ${fmt(d.jobsPerSecond, 0)} jobs/s | 1 worker ${fmt(d1.jobsPerSecond, 0)} jobs/s | ${fmtRatio(ratio)} | ${goal[0]} | ${[goal[1], pauses(d)].filter(Boolean).join(" ")} |`,
      );
    }
    const bad = r.drains.reduce((n, d) => n + d.jobs - (d.statuses.COMPLETED ?? 0), 0);
    const jobs = r.drains.reduce((n, d) => n + d.jobs, 0);
    push(`| 4 | Jobs lost / not COMPLETED | ${bad} of ${jobs} | – | – | 0 | ${mark(bad === 0)} |`);
    if (r.audit) push(auditRow(r.audit));
  }
  if (r.usageCost) push(...usageRows(r.usageCost));
  if (r.reel) {
    push(
      `| 5 | Sandbox processing, reel-valid.mp4 | ${fmt(r.reel.sandboxProcessingMs, 0)} ms | configured ≥ ${r.reel.configuredProcessingMs} ms | ${fmtRatio(r.reel.sandboxProcessingMs / r.reel.configuredProcessingMs)} | | |`,
    );
    for (const f of r.reel.flows)
      push(
        `| 5 | Reel flow at ${f.pollIntervalMs} ms polls | ${fmt(f.totalMs, 0)} ms | ${f.polls} polls × ${f.pollIntervalMs} ms = ${f.polls * f.pollIntervalMs} ms | +${fmt(f.overheadMs, 0)} ms | | |`,
      );
  }
  const c = r.concurrency;
  for (const d of c?.drains ?? []) {
    push(
      `| 7 | Drain ${d.jobs} jobs × ${d.maxTokens} tokens at ${d.tokensPerSecond} tokens/s, WORKER_CONCURRENCY ${d.concurrency} | ${fmt(d.drainMs / 1000)} s | ideal ${fmt(d.idealMs / 1000)} s (one job per partition: ${fmt(d.partitionBoundMs / 1000, 0)} s) | ${fmtRatio(d.ratio)} | ≤ 1.25× | ${mark(d.ratio <= 1.25)} |`,
    );
  }
  if (c?.fairness) {
    const f = c.fairness;
    push(
      `| 7 | A lone tenant's job behind a ${f.flood.toLocaleString("en-US")}-job flood on its partition: time to start, p99 | ${fmt(f.startMs.p99, 0)} ms | p50 ${fmt(f.startMs.p50, 0)} ms | – | ≤ 1,000 ms | ${mark(f.startMs.p99 <= 1000)} |`,
    );
  }
  if (c && c.memory.length) {
    const [small, ...rest] = [...c.memory].sort((a, b) => a.maxBuffered - b.maxBuffered);
    for (const m of rest)
      push(
        `| 7 | Worker RSS, ${m.backlog.toLocaleString("en-US")}-job backlog, window ${m.maxBuffered.toLocaleString("en-US")}/partition | ${fmt(m.rssMb, 0)} MB (${m.buffered.toLocaleString("en-US")} buffered) | window ${small.maxBuffered.toLocaleString("en-US")}: ${fmt(small.rssMb, 0)} MB (${small.buffered.toLocaleString("en-US")} buffered) | ${fmtRatio(m.rssMb / small.rssMb)} | bounded by the window | |`,
      );
  }
  if (r.raw) {
    push(
      `| 6 | Bare Node http server, 50 connections | ${fmt(r.raw.bareHttp.rps, 0)} req/s, p99 ${fmt(r.raw.bareHttp.p99, 0)} ms | – | – | | |`,
    );
    push(
      `| 6 | Redis pub/sub, pipelined PUBLISH → one subscriber | ${fmt(r.raw.pubsubPerSecond, 0)} msg/s | – | – | | |`,
    );
  }
  push("");

  if (r.raw) {
    push(
      "## 6. What the machine allows (raw limits, same run)",
      "",
      "| Limit | Value |",
      "|---|---|",
      `| Bare Node \`http\` server (a child process), POST with the submit body, 50 connections, autocannon | ${fmt(r.raw.bareHttp.rps, 0)} req/s, p50 ${fmt(r.raw.bareHttp.p50, 1)} ms, p99 ${fmt(r.raw.bareHttp.p99, 1)} ms |`,
      `| Redis pub/sub: ${r.raw.pubsubMessages.toLocaleString("en-US")} PUBLISH pipelined 1,000 at a time, counted at one ioredis subscriber | ${fmt(r.raw.pubsubPerSecond, 0)} msg/s |`,
      `| One writer awaiting each \`MULTI RPUSH PUBLISH EXEC\` (what StreamWriter did per delta before the change) | ${fmt(r.raw.sequentialWritesPerSecond, 0)} writes/s (${fmt(1000 / r.raw.sequentialWritesPerSecond, 3)} ms each) |`,
      `| redis-benchmark PUBLISH, 50 clients | ${r.raw.redisBenchmarkPublish ? `${fmt(r.raw.redisBenchmarkPublish, 0)} req/s` : "redis-benchmark not installed"} |`,
      "",
    );
  }

  if (s) {
    push(
      "## 1. Submit throughput",
      "",
      `Each run: ${r.sizes.backlog.toLocaleString("en-US")} requests at 50 connections to \`POST /api/bench/floor\` (a route handler that only answers \`{ok:true}\`: the framework's floor),`,
      `then the same number with the same headers and bodies to \`POST /v1/jobs\` (auth, zod, rate limiter, Redis claim, Kafka produce with acks=-1, Redis index).`,
      `Bodies carry no job_id (the server makes one) and cycle through ${r.sizes.backlogWorkers.length ? "12" : ""} tenants chosen to cover all 6 partitions; max_tokens ${r.sizes.backlogMaxTokens}.`,
      "No worker runs meanwhile, so the jobs queue up as in a burst; each run's jobs are the backlog of figure 4.",
      "",
      "| Run | Floor req/s | Floor p50 / p99 ms | Submit req/s | Submit p50 / p99 ms | req/s ratio | p99 ratio | Submit ÷ bare http | non-2xx |",
      "|---|---|---|---|---|---|---|---|---|",
      ...r.submits.map(
        (x, i) =>
          `| ${i + 1} | ${fmt(x.floor.rps, 0)} | ${fmt(x.floor.p50, 0)} / ${fmt(x.floor.p99, 0)} | ${fmt(x.submit.rps, 0)} | ${fmt(x.submit.p50, 0)} / ${fmt(x.submit.p99, 0)} | ${fmtRatio(x.submit.rps / x.floor.rps)} | ${fmtRatio(x.submit.p99 / x.floor.p99)} | ${r.raw ? fmtRatio(x.submit.rps / r.raw.bareHttp.rps) : "–"} | ${x.submit.non2xx} |`,
      ),
      "",
      `Median ratio: **${fmtRatio(s.rpsRatio)}** of the floor's req/s (goal ≥ 0.85×), p99 **${fmtRatio(s.p99Ratio)}** the floor's (goal ≤ 1.30×).`,
      "",
    );
  }

  if (ft) {
    push(
      "## 2. Pipeline overhead on time to first token",
      "",
      `${ft.samples} samples after ${ft.warmUpSamples ?? 2} not counted (the stack warming up), alternating: \`createLocalNgram\` (same corpus, ${ft.tokensPerSecond} tokens/s, temperature 0, same prompt) called in the bench process until its first delta,`,
      "and POST /v1/jobs → the first `delta` event at an SSE client of `/jobs/{id}/stream` through Kafka, one idle worker, Redis and the web server.",
      "",
      "| | median | p90 | p99 | min |",
      "|---|---|---|---|---|",
      `| Through the pipeline | ${fmt(ft.pipeline.p50)} ms | ${fmt(ft.pipeline.p90)} ms | ${fmt(ft.pipeline.p99)} ms | ${fmt(ft.pipeline.min)} ms |`,
      `| Model alone | ${fmt(ft.direct.p50)} ms | ${fmt(ft.direct.p90)} ms | ${fmt(ft.direct.p99)} ms | ${fmt(ft.direct.min)} ms |`,
      `| Added by the pipeline | **${fmt(ft.pipeline.p50 - ft.direct.p50)} ms** | ${fmt(ft.pipeline.p90 - ft.direct.p90)} ms | | |`,
      `| Added, not counting the wait for the worker's next fetch (submit + worker overhead + delivery, medians) | ${fmt(ft.parts.submit + (ft.parts.worker - ft.direct.p50) + ft.parts.delivery)} ms | | | |`,
      "",
      `Where the median goes (ms; the worker's clock and ours agree to the millisecond on one machine): submit answered ${fmt(ft.parts.submit)},` +
        ` then to the worker's attempt start ${fmt(ft.parts.toWorker)}, worker start → first token (its ttft_ms, includes the model's own ${fmt(1000 / ft.tokensPerSecond, 0)} ms pace) ${fmt(ft.parts.worker)}, delivery to the SSE client ${fmt(ft.parts.delivery)}.`,
      "",
    );
  }

  if (r.fanOut.length) {
    push(
      "## 3. Streaming fan-out",
      "",
      "Delivery latency is Redis PUBLISH → SSE client: a subscriber in the bench process (PSUBSCRIBE `job:stream:*`) timestamps each message when Redis hands it out,",
      "the SSE client timestamps the same `seq` when its bytes arrive; both clocks are the same `performance.now()`. CPU is % of one core over the window, from /proc.",
      "A delta is one of the model's pieces of text (about a token); a message may carry several when the worker is behind (it coalesces a job's deltas while its previous message is written).",
      "Pace is each stream's first-to-last delta time against the model's, over all streams; deltas/s also counts the time the worker took to start the N jobs from its backlog (\"starts over\").",
      "",
      "| Mode | N | max_tokens | Streaming at once | Deltas delivered / expected (messages) | Deltas/s (offered) | Pace (starts over) | p50 ms | p90 ms | p99 ms | max ms | Gaps/dups | Redis commands / EXEC per delta | Worker-side CPU | Web CPU | Redis CPU | Bench CPU (loop delay p99) | Web / worker peak RSS |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...r.fanOut.map((f) => {
        const worker = f.procs.generator ?? f.procs.worker;
        return (
          `| ${f.mode === "worker" ? "real worker, Kafka" : "all at once"} | ${f.n} | ${f.maxTokens} | ${f.maxConcurrent} | ${f.modelDeltas ?? f.deltas} / ${f.expectedDeltas} (${f.deltas}) | ${fmt(f.deltasPerSecond, 0)} (${fmt(f.n * f.tokensPerSecond, 0)}) | ${f.paceRatio === undefined ? "–" : `${fmtRatio(f.paceRatio)} (${fmt(f.startSpreadMs, 0)} ms)`} |` +
          ` ${fmt(f.latency.p50)} | ${fmt(f.latency.p90)} | ${fmt(f.latency.p99)} | ${fmt(f.latency.max)} | ${f.gapsOrDuplicates} | ${fmt(f.redisCommandsPerDelta, 2)} / ${fmt(f.execPerDelta, 2)} | ${fmt(worker?.cpuPct, 0)}% | ${fmt(f.procs.web?.cpuPct, 0)}% | ${fmt(f.procs.redis?.cpuPct, 0)}% | ${fmt(f.procs.bench?.cpuPct, 0)}% (${fmt(f.benchLoopDelayP99, 0)} ms) | ${fmt(f.procs.web?.peakRssMb, 0)} / ${fmt(worker?.peakRssMb, 0)} MiB |`
        );
      }),
      "",
    );
  }

  if (r.streamShapes) {
    const sh = r.streamShapes;
    const [list, stream] = [sh.medians["list+channel"], sh.medians.stream];
    push(
      "## 3b. A job's stream in Redis: a list and a channel, or one Redis Stream",
      "",
      `${sh.n} jobs each giving a delta ${sh.tokensPerSecond} times a second for ${sh.seconds} s, written by one process and read by the bench process, in each shape in turn (${sh.runs.length / 2} rounds).`,
      "**List + channel** is Dispatch's: StreamWriter appends each message to the job's replay list and publishes it on its channel (two commands a message, every job's messages of a turn in one script); the reader is the web's StreamHub.",
      "**Stream** is the shape a ≤ 1.5 commands-per-delta goal points to: one XADD a message serves replay and live readers (batched per turn the same way); the reader is one blocking XREAD over every stream from the last entry read, as a web process's hub would hold it.",
      "Redis CPU is its own (INFO cpu) over the run; reader and writer CPU are each process's own. A ratio is stream ÷ list + channel, of the medians.",
      "",
      "| Shape | Deltas received / written | Redis commands per delta | Redis CPU per delta | Reader CPU per delta | Writer CPU per delta | Latency p50 / p99 |",
      "|---|---|---|---|---|---|---|",
      ...sh.runs.map(
        (run) =>
          `| ${run.shape} | ${run.received} / ${run.deltas} | ${fmt(run.commandsPerDelta, 2)} | ${fmt(run.redisCpuUs)} µs | ${fmt(run.readerCpuUs)} µs | ${fmt(run.writerCpuUs)} µs | ${fmt(run.latency.p50, 2)} / ${fmt(run.latency.p99, 2)} ms |`,
      ),
      `| **stream ÷ list + channel** | | ${fmtRatio(stream.commandsPerDelta / list.commandsPerDelta)} | **${fmtRatio(stream.redisCpuUs / list.redisCpuUs)}** | **${fmtRatio(stream.readerCpuUs / list.readerCpuUs)}** | ${fmtRatio(stream.writerCpuUs / list.writerCpuUs)} | p99 ${fmtRatio(stream.p99 / list.p99)} |`,
      "",
    );
  }

  if (r.drains.length) {
    const svg = lineChartSvg(
      r.drains.map((d) => ({
        label: `${d.workers} worker${d.workers > 1 ? "s" : ""}`,
        points: d.lag.map((p) => ({ x: p.t / 1000, y: p.lag })),
      })),
      {
        title: `Consumer lag draining ${r.sizes.backlog.toLocaleString("en-US")} jobs`,
        xLabel: "seconds since the workers were started",
        yLabel: "jobs not committed (lag)",
      },
    );
    files[PLOT_SVG] = svg;
    const png = toPng(svg);
    if (png) files[PLOT_PNG] = png;
    push(
      "## 4. Backlog drain",
      "",
      `${r.sizes.backlog.toLocaleString("en-US")} jobs submitted at once (the figure-1 burst, 6 partitions covered) with no worker running; then N fresh worker processes with`,
      "LOCAL_MODEL_TOKENS_PER_SECOND=100000 drain them. Lag is the sum over partitions of high watermark − committed offset (kafkajs admin `fetchTopicOffsets` vs `fetchOffsets`).",
      "With the embedded Redis each drain starts on a freshly rewritten AOF with automatic rewrites off until it ends: whether a rewrite (a fork whose CPU counts as Redis's) lands in a drain",
      "depends on what earlier figures wrote, and one that did doubled Redis's CPU per job in A/B rounds.",
      "",
      "| Workers | Jobs | First start → last completion | Spawn → last completion | Jobs/s | Scaling | Statuses | Retried | Jobs per worker | Partitions per worker at the end | Worker CPU (each) | Web / Redis / broker CPU | Machine: steal / CPU wait |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...r.drains.map((d) => {
        const workerCpu = Object.entries(d.procs)
          .filter(([k]) => k.startsWith("worker"))
          .map(([, v]) => `${fmt(v.cpuPct, 0)}%`)
          .join(", ");
        return (
          `| ${d.workers} | ${d.jobs} | ${fmt(d.processingMs / 1000, 1)} s | ${fmt(d.fromSpawnMs / 1000, 1)} s | ${fmt(d.jobsPerSecond, 0)} | ${fmtRatio(d.jobsPerSecond / d1.jobsPerSecond)} |` +
          ` ${Object.entries(d.statuses)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")} | ${d.retried} | ${Object.values(d.perWorker)
            .sort((a, b) => b - a)
            .join(" / ")} | ${Object.values(d.assignments ?? {})
            .map((p) => `[${p.join(",")}]`)
            .join(
              " ",
            )} | ${workerCpu} | ${fmt(d.procs.web?.cpuPct, 0)}% / ${fmt(d.procs.redis?.cpuPct, 0)}% / ${fmt(d.procs.broker?.cpuPct, 0)}% | ${machineStall(d)} |`
        );
      }),
      "",
      r.audit ? auditParagraph(r.audit) : "Audit log: not checked in this run.",
      "",
      files[PLOT_PNG] ? `![Consumer lag over time](${PLOT_PNG})` : `![Consumer lag over time](${PLOT_SVG})`,
      "",
      "Lag over time (jobs):",
      "",
      "```",
      ...lagTable(r.drains),
      "```",
      "",
    );
  }

  if (r.usageCost) push(...usageTable(r.usageCost));

  if (r.reel) {
    push(
      "## 5. Reel flow",
      "",
      `Sandbox processing of \`public/samples/reel-valid.mp4\`, the sandbox's Graph API driven directly (POST /{account}/media, then status read every 20 ms): **${fmt(r.reel.sandboxProcessingMs, 0)} ms**,`,
      `of which SANDBOX_PROCESSING_MS makes it wait at least ${r.reel.configuredProcessingMs} ms; parsing the file itself (probeVideo, in this process) takes ${fmt(r.reel.probeMs, 1)} ms.`,
      "",
      "| Poll interval | Status | POST /api/reels → PUBLISHED | Polls | Configured waits | Overhead beyond the waits |",
      "|---|---|---|---|---|---|",
      ...r.reel.flows.map(
        (f) =>
          `| ${f.pollIntervalMs} ms | ${f.status} | ${fmt(f.totalMs, 0)} ms | ${f.polls} | ${f.polls * f.pollIntervalMs} ms | ${fmt(f.overheadMs, 0)} ms |`,
      ),
      "",
    );
  }

  if (c) {
    push(
      "## 7. Concurrency beyond the partition count",
      "",
      "A worker runs WORKER_CONCURRENCY jobs at once from all its partitions, tenants taking turns (docs/architecture.md). Jobs at the pace of a hosted model: local-ngram at 40 tokens/s, every job its full max_tokens. TENANT_CONCURRENCY is set to WORKER_CONCURRENCY here, as the ideal counts the worker's concurrency as the only limit (with the default 16, each tenant's 50 jobs need 4 rounds of 2.5 s, so the drain cannot beat 10 s whatever the worker's concurrency).",
      "",
      "| WORKER_CONCURRENCY | Jobs | Tenants | Drain (first start → last done) | Ideal (jobs × job time ÷ concurrency) | Ratio | One job per partition (computed) | Peak RUNNING | Starts spread over | Job time, median | Worker CPU | Statuses |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...c.drains.map(
        (d) =>
          `| ${d.concurrency} | ${d.jobs} | ${d.tenants} | ${fmt(d.drainMs / 1000)} s | ${fmt(d.idealMs / 1000)} s | ${fmtRatio(d.ratio)} | ${fmt(d.partitionBoundMs / 1000, 0)} s | ${d.peakRunning} | ${fmt(d.startSpreadMs / 1000)} s | ${fmt(d.jobMs, 0)} ms (ideal ${fmt((d.maxTokens / d.tokensPerSecond) * 1000, 0)}) | ${fmt(d.workerCpuPct, 0)} % | ${Object.entries(
            d.statuses,
          )
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")} |`,
      ),
      "",
    );
    if (c.fairness) {
      const f = c.fairness;
      push(
        `**Fairness.** Tenant \`${f.floodTenant}\` submits ${f.flood.toLocaleString("en-US")} long jobs (4,000 tokens each) to partition ${f.partition}; once they are in the worker's window, tenant \`${f.loneTenant}\` (same partition) submits ${f.startMs.n} short jobs one after another.`,
        `From each one's 202 to its start: p50 **${fmt(f.startMs.p50, 0)} ms**, p99 **${fmt(f.startMs.p99, 0)} ms**, max ${fmt(f.startMs.max, 0)} ms. The flood had ${f.floodStarted} jobs started (its TENANT_CONCURRENCY); the rest waited without blocking the neighbour.`,
        "",
      );
    }
    if (c.memory.length) {
      push(
        "**Memory.** One worker facing the backlog (long jobs, so nothing drains): it reads ahead until each partition's window is full, then pauses those fetches.",
        "",
        "| Backlog | MAX_BUFFERED_PER_PARTITION | Messages buffered | Worker RSS |",
        "|---|---|---|---|",
        ...c.memory.map(
          (m) =>
            `| ${m.backlog.toLocaleString("en-US")} | ${m.maxBuffered.toLocaleString("en-US")} | ${m.buffered.toLocaleString("en-US")} | ${fmt(m.rssMb, 0)} MB |`,
        ),
        "",
      );
    }
  }

  if (before) {
    const prior = new Map(keyFigures(before).map((k) => [k.name, k]));
    push(
      "## Before / after the change",
      "",
      `Before: \`${before.command}\` on ${before.date} (load ${before.loadBefore.join(" / ")}, backlog ${before.sizes.backlog.toLocaleString("en-US")} jobs), code ${before.machine.commit}.`,
      "After: this run. Figures are relative to their own run's baseline where one exists; Redis round trips and CPU per delta hardly depend on the machine's load.",
      "",
      "| Figure | Before | After | After ÷ before |",
      "|---|---|---|---|",
      ...keyFigures(r)
        .filter((k) => prior.has(k.name))
        .map((k) => {
          const b = prior.get(k.name)!;
          return `| ${k.name} (${k.better} is better) | ${fmt(b.value, 2)} ${k.unit} | ${fmt(k.value, 2)} ${k.unit} | ${fmtRatio(ratio(k.value, b.value))} |`;
        }),
      "",
    );
  }

  const notes = readNotes();
  if (notes) push(notes.trim(), "");
  push(
    "## Running it",
    "",
    "`npm run bench` runs everything (about 10 minutes on 2 cores, plus `next build` when the build is stale). Variables:",
    "",
    "| Variable | Effect |",
    "|---|---|",
    "| `BENCH_SCALE` | multiplies the sizes (backlog, samples; fan-out N only below 1); default 1 = the issue's sizes |",
    '| `BENCH_FANOUT` | the N of the "all at once" fan-out runs, e.g. `50,200,500` |',
    "| `BENCH_DRAIN_WORKERS` | worker processes per backlog drain, e.g. `1,2,4`; `0` submits one burst and drains nothing |",
    '| `BENCH_FANOUT_TPS`, `BENCH_FANOUT_SECONDS` | tokens/s and seconds of the "all at once" runs (default 50, 5) |',
    "| `BENCH_FANOUT_WORKER`, `BENCH_FANOUT_WORKER_TPS` | the N and tokens/s of the runs through Kafka and a real worker (default `200,500`, 20) |",
    "| `BENCH_CONCURRENCY` | WORKER_CONCURRENCY of the realistic-pace drains (default `64,256`) |",
    "| `BENCH_ONLY` | figures to run, of `raw,submit,usage,ttft,responses,fanout-worker,shapes,fanout,reel,concurrency`; a partial run writes `.bench-data/BENCHMARKS.md`, not the committed one |",
    "| `BENCH_USAGE_ROUNDS` | on/off pairs of the usage aggregates' drain (default 3) |",
    "| `BENCH_AB`, `BENCH_AB_ROUNDS` | runs the chosen figures on that commit and on the working tree in turn, that many rounds (default 2), and writes `.bench-data/ab.md` |",
    '| `BENCH_BASELINE` | an earlier run\'s `results.json`, shown as "before" |',
    "| `BENCH_RENDER` | writes this report again from a `results.json`, running nothing |",
    "| `BENCH_PROFILE` | every Node process of the stack writes a CPU profile to `.bench-data/profiles/` |",
    "| `REDIS_URL`, `KAFKA_BROKERS` | measure against your own Redis / Kafka instead of the embedded ones |",
    "",
    "Each run keeps its raw results in `.bench-data/results.json`, the stack's log in `.bench-data/run/stack.log`, and every fan-out delivery sample in `.bench-data/run/fan-out-*.json`.",
    "",
  );
  return { markdown: `${lines.join("\n")}\n`, files };
}

/**
 * Every backlog job's completed event must be found, on the log or in the audit archive (the
 * embedded broker trims its bounded log; the archive keeps what it drops), and none twice in either.
 */
/** The usage aggregates' cost: the drain's slowdown (the goal) and the CPU per job they add, which the machine's load moves less. */
function usageRows(u: UsageCost): string[] {
  const cpu = (side: UsageCost["on"]) => side.workerCpuMsPerJob.p50 + side.redisCpuMsPerJob.p50;
  const rounds = u.rounds.length;
  return [
    `| 4 | Backlog drain with the usage aggregates on, median of ${rounds} | ${fmt(u.on.jobsPerSecond.p50, 0)} jobs/s | off ${fmt(u.off.jobsPerSecond.p50, 0)} jobs/s | ${u.drainSlowdownPct >= 0 ? "−" : "+"}${fmt(Math.abs(u.drainSlowdownPct), 1)} % | < 5 % slower | ${mark(u.drainSlowdownPct < 5)} |`,
    `| 4 | …worker + Redis CPU per job, aggregates on, median of ${rounds} | ${fmt(cpu(u.on), 2)} ms | off ${fmt(cpu(u.off), 2)} ms | ${fmtRatio(cpu(u.on) / cpu(u.off))} | | |`,
  ];
}

/** Each round of the usage figure: the two drains in the order they ran. */
function usageTable(u: UsageCost): string[] {
  return [
    `Usage aggregates on and off (issue 25): ${u.rounds.length} rounds of ${u.jobs.toLocaleString("en-US")} jobs each way, one worker, the two modes alternating`,
    "which goes first. CPU is ms per job (/proc).",
    "",
    "| Round | On: jobs/s | Off: jobs/s | On: worker / Redis CPU | Off: worker / Redis CPU |",
    "|---|---|---|---|---|",
    ...u.rounds.map(
      ({ on, off }, i) =>
        `| ${i + 1} | ${fmt(on.jobsPerSecond, 0)} | ${fmt(off.jobsPerSecond, 0)} | ${fmt(on.workerCpuMsPerJob, 2)} / ${fmt(on.redisCpuMsPerJob, 2)} ms | ${fmt(off.workerCpuMsPerJob, 2)} / ${fmt(off.redisCpuMsPerJob, 2)} ms |`,
    ),
    "",
  ];
}

/** What the machine took from a drain: CPU stolen by the host, and time tasks waited for a CPU. */
const machineStall = (d: DrainRun) =>
  d.machine
    ? `${fmt(d.machine.stealMs / 1000, 1)} s / ${d.machine.cpuWaitMs === undefined ? "–" : `${fmt(d.machine.cpuWaitMs / 1000, 1)} s`}`
    : "–";

/** Steal beyond this in a drain makes it a drain on another machine, in effect (scripts/bench/NOTES.md, fourth session). */
const STOLEN_MS = 1000;

/** A drain's pauses with no job completing (a late worker's join stops the embedded broker's group for 5 s), and steal past STOLEN_MS. */
const pauses = (d: DrainRun) =>
  [
    d.stallsMs?.length ? `paused ${d.stallsMs.map((ms) => `${fmt(ms / 1000, 1)} s`).join(", ")} (a join)` : "",
    (d.machine?.stealMs ?? 0) > STOLEN_MS ? `${fmt(d.machine!.stealMs / 1000, 1)} s of CPU stolen: not comparable` : "",
  ]
    .filter(Boolean)
    .join("; ");

function auditRow(a: AuditCheck): string {
  const ok = a.duplicated === 0 && a.missing === 0;
  const where =
    a.onLog === undefined
      ? `${a.missing} without one`
      : `${a.onLog} on the log, ${a.inArchive === undefined ? "no audit archive" : `${a.inArchive} in the audit archive`}, ${a.missing} in neither, ${a.duplicated} twice`;
  return `| 4 | Completed events: exactly one per job (log ∪ audit archive) | ${a.exactlyOnce} of ${a.jobs}; ${where} | – | – | all, each once | ${mark(ok)} |`;
}

function auditParagraph(a: AuditCheck): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const read = `Audit log: read ${n(a.eventsRead)} events of \`ai.generation.completed\`${a.inArchive === undefined ? "" : " and the audit archive (`AUDIT_ARCHIVE_DIR`)"}`;
  const kept =
    a.onLog === undefined
      ? ""
      : ` (${n(a.onLog)} still on the log${a.inArchive === undefined ? "" : `, ${n(a.inArchive)} in the archive`})`;
  const counts = `of the ${n(a.jobs)} backlog jobs ${n(a.exactlyOnce)} have exactly one completed event${kept}, ${a.missing} none, ${a.duplicated} more than one.`;
  const trimmed = a.trimmed
    ? ` The broker no longer had the oldest ${n(a.trimmed)} events (its partitions' low offsets): librdkafka's mock cluster keeps a bounded log per partition, so with the embedded broker every worker also appends each event to the audit archive in \`DATA_DIR/audit\`; a real cluster with retention.ms=-1 keeps everything on the log.`
    : "";
  return `${read}; ${counts}${trimmed}`;
}

function lagTable(drains: DrainRun[]): string[] {
  const end = Math.max(...drains.map((d) => d.lag.at(-1)?.t ?? 0));
  const step = Math.max(2000, Math.ceil(end / 24 / 2000) * 2000);
  const rows = [
    `${"t (s)".padStart(6)} ${drains.map((d) => `${d.workers} worker${d.workers > 1 ? "s" : ""}`.padStart(10)).join(" ")}`,
  ];
  for (let t = 0; t <= end + step; t += step) {
    const cells = drains.map((d) => {
      const sample = d.lag.filter((p) => p.t <= t).at(-1);
      return (sample ? String(sample.lag) : "").padStart(10);
    });
    rows.push(`${String(t / 1000).padStart(6)} ${cells.join(" ")}`);
    if (drains.every((d) => (d.lag.filter((p) => p.t <= t).at(-1)?.lag ?? 1) === 0)) break;
  }
  return rows;
}

/** rsvg-convert (Debian's librsvg2-bin) makes a PNG when it is installed; otherwise the SVG is the plot. */
function toPng(svg: string): Buffer | undefined {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-plot-"));
  try {
    writeFileSync(path.join(dir, "plot.svg"), svg);
    execFileSync("rsvg-convert", ["-o", path.join(dir, "plot.png"), path.join(dir, "plot.svg")], { stdio: "ignore" });
    return readFileSync(path.join(dir, "plot.png"));
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Hand-written findings (scripts/bench/NOTES.md) go at the end of the generated report. */
function readNotes(): string | undefined {
  try {
    return readFileSync(path.join(__dirname, "NOTES.md"), "utf8");
  } catch {
    return undefined;
  }
}

/** Beside the commands-per-delta goal: what the one-command shape costs, measured in the same run (§3b). */
function shapesNote(shapes: StreamShapes | undefined): string {
  if (!shapes) return "–";
  const [list, stream] = [shapes.medians["list+channel"], shapes.medians.stream];
  return `one Redis Stream a job: ${fmt(stream.commandsPerDelta, 2)} commands a delta, ${fmtRatio(stream.redisCpuUs / list.redisCpuUs)} the Redis CPU and ${fmtRatio(stream.readerCpuUs / list.readerCpuUs)} the reader's (§3b)`;
}
