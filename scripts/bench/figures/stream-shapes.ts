import { fork } from "node:child_process";
import path from "node:path";
import { jobKeys } from "../../../lib/jobs/keys";
import { createRedis, createSubscriber } from "../../../lib/redis";
import { StreamHub } from "../../../lib/stream/stream-hub";
import type { BenchContext } from "../lib/context";
import { median, sleep, summarize, type Summary } from "../lib/stats";
import { commandStats } from "./fan-out";
import { shapeKeys, wallNow, type ShapeRun, type StreamShape } from "../stream-shape-writer";

/**
 * What a job's stream costs per delta in Redis and in the processes on either side, written as
 * Dispatch writes it (a replay list and a pub/sub channel per job: two commands a message) and as
 * one Redis Stream per job (XADD serves replay and live readers: one command a message), at the
 * fan-out figure's load. Issue 24 asks for ≤ 1.5 Redis commands a delta; this measures whether the
 * shape that meets it costs Redis and the web process less, in the same run.
 */
export interface StreamShapeRun {
  shape: StreamShape;
  deltas: number;
  received: number;
  commandsPerDelta: number;
  /** Redis's own CPU (INFO cpu, user + system) per delta, in µs. */
  redisCpuUs: number;
  /** The reader's CPU per delta (the bench process: a StreamHub, or one XREAD loop over every stream), in µs. */
  readerCpuUs: number;
  /** The writer process's CPU per delta, in µs. */
  writerCpuUs: number;
  latency: Summary;
}

export interface StreamShapes {
  n: number;
  tokensPerSecond: number;
  seconds: number;
  runs: StreamShapeRun[];
  /** Medians over each shape's runs. */
  medians: Record<StreamShape, Omit<StreamShapeRun, "shape" | "latency"> & { p99: number }>;
}

const SHAPES: StreamShape[] = ["list+channel", "stream"];

export async function measureStreamShapes(
  ctx: BenchContext,
  n: number,
  tokensPerSecond: number,
  seconds: number,
  rounds: number,
): Promise<StreamShapes> {
  const url = String(ctx.stack.env.REDIS_URL);
  const writer = fork(path.join(__dirname, "../stream-shape-writer.ts"), [], {
    cwd: ctx.root,
    execArgv: ["--import", "tsx"],
    env: { ...ctx.stack.env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  await new Promise<void>((resolve, reject) => {
    writer.once("message", () => resolve());
    writer.once("exit", (code) => reject(new Error(`the stream-shape writer exited with code ${code}`)));
  });
  const runs: StreamShapeRun[] = [];
  try {
    for (let round = 0; round < rounds; round++)
      for (const shape of SHAPES) {
        const run = await measureShape(ctx, url, writer, { shape, n, seconds, tokensPerSecond });
        ctx.log(
          `stream shape ${shape}, ${n} streams: ${run.received}/${run.deltas} deltas, ${run.commandsPerDelta.toFixed(2)} Redis commands, ` +
            `Redis ${run.redisCpuUs.toFixed(1)} µs, reader ${run.readerCpuUs.toFixed(1)} µs, writer ${run.writerCpuUs.toFixed(1)} µs a delta, ` +
            `latency p50 ${run.latency.p50.toFixed(2)} p99 ${run.latency.p99.toFixed(2)} ms`,
        );
        runs.push(run);
      }
  } finally {
    writer.kill();
  }
  const medianOf = (shape: StreamShape) => {
    const of = runs.filter((r) => r.shape === shape);
    const m = (pick: (r: StreamShapeRun) => number) => median(of.map(pick));
    return {
      deltas: m((r) => r.deltas),
      received: m((r) => r.received),
      commandsPerDelta: m((r) => r.commandsPerDelta),
      redisCpuUs: m((r) => r.redisCpuUs),
      readerCpuUs: m((r) => r.readerCpuUs),
      writerCpuUs: m((r) => r.writerCpuUs),
      p99: m((r) => r.latency.p99),
    };
  };
  return {
    n,
    tokensPerSecond,
    seconds,
    runs,
    medians: { "list+channel": medianOf("list+channel"), stream: medianOf("stream") },
  };
}

async function measureShape(
  ctx: BenchContext,
  url: string,
  writer: ReturnType<typeof fork>,
  run: ShapeRun,
): Promise<StreamShapeRun> {
  const expected = run.n * Math.round(run.seconds * run.tokensPerSecond);
  const latencies: number[] = [];
  let allReceived!: () => void;
  const done = new Promise<void>((resolve) => (allReceived = resolve));
  // A delta's text is the time it was given; a message may carry several deltas' text.
  const receive = (text: string) => {
    const at = wallNow();
    for (const sent of text.trim().split(" ")) latencies.push(at - Number(sent));
    if (latencies.length >= expected) allReceived();
  };

  const connection = run.shape === "stream" ? createRedis(url) : createSubscriber(url);
  let reading = true;
  let reader: Promise<void> = Promise.resolve();
  const unsubscribes: (() => Promise<void>)[] = [];
  if (run.shape === "stream") {
    await connection.ping();
    // One blocking read over every stream, each from the last entry read, as a web process's hub would.
    const keys = Array.from({ length: run.n }, (_, i) => shapeKeys.stream(i));
    const ids = keys.map(() => "0-0");
    const index = new Map(keys.map((key, i) => [key, i]));
    reader = (async () => {
      while (reading) {
        const answer = await connection.xread("BLOCK", 500, "STREAMS", ...keys, ...ids);
        for (const [key, entries] of answer ?? []) {
          const i = index.get(key)!;
          for (const [id, fields] of entries) {
            ids[i] = id;
            receive((JSON.parse(fields[1]) as { delta: string }).delta);
          }
        }
      }
    })();
  } else {
    const hub = new StreamHub(connection);
    for (let i = 0; i < run.n; i++)
      unsubscribes.push(
        await hub.subscribe(
          jobKeys.stream(shapeKeys.jobId(i)),
          (message: { delta: string }) => receive(message.delta),
          (raw) => JSON.parse(raw) as { delta: string },
        ),
      );
  }

  const stats0 = await redisStats(ctx);
  const cpu0 = process.cpuUsage();
  const written = new Promise<{ deltas: number; cpuMs: number }>((resolve) => writer.once("message", resolve));
  writer.send(run);
  const { deltas, cpuMs: writerCpuMs } = await written;
  await Promise.race([done, sleep(30_000)]);
  const cpu = process.cpuUsage(cpu0);
  const stats1 = await redisStats(ctx);
  reading = false;
  await reader;
  await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
  connection.disconnect();
  const keys = Array.from({ length: run.n }, (_, i) =>
    run.shape === "stream" ? shapeKeys.stream(i) : jobKeys.events(shapeKeys.jobId(i)),
  );
  await ctx.redis.unlink(...keys);

  return {
    shape: run.shape,
    deltas,
    received: latencies.length,
    commandsPerDelta: (stats1.commands - stats0.commands) / deltas,
    redisCpuUs: ((stats1.cpuS - stats0.cpuS) * 1e6) / deltas,
    readerCpuUs: (cpu.user + cpu.system) / deltas,
    writerCpuUs: (writerCpuMs * 1000) / deltas,
    latency: summarize(latencies),
  };
}

/** Redis's calls of every command so far (those scripts call included) and its CPU seconds. */
async function redisStats(ctx: BenchContext): Promise<{ commands: number; cpuS: number }> {
  const { total } = await commandStats(ctx);
  const info = await ctx.redis.info("cpu");
  const cpu = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? NaN);
  return { commands: total, cpuS: cpu("used_cpu_sys") + cpu("used_cpu_user") };
}
