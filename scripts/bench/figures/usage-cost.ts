import type { BenchContext } from "../lib/context";
import { summarize, type Summary } from "../lib/stats";
import { drainBacklog, type DrainRun } from "./backlog";
import { submitMany } from "./concurrency";
import { freshBroker } from "./submit";

/** One drain of the backlog with the usage aggregates on or off: its speed and what it cost the worker and Redis. */
interface UsageDrain {
  jobsPerSecond: number;
  /** CPU of the worker process and of Redis per job (ms). */
  workerCpuMsPerJob: number;
  redisCpuMsPerJob: number;
}

export interface UsageCost {
  jobs: number;
  rounds: { on: UsageDrain; off: UsageDrain }[];
  on: Record<keyof UsageDrain, Summary>;
  off: Record<keyof UsageDrain, Summary>;
  /** How much slower the drain is with the aggregates on: 1 − median(on) / median(off), in %. */
  drainSlowdownPct: number;
}

/**
 * Issue 25's figure: the backlog drain (one worker, the fast model) with USAGE_AGGREGATES on and
 * off, in alternating order round after round, so a drift of the machine's load does not favour
 * one side. Each drain gets a fresh backlog of `jobs`, on a new embedded broker (a later drain on
 * the same one is slower: Stack.restartBroker).
 */
export async function measureUsageCost(ctx: BenchContext, jobs: number, rounds: number): Promise<UsageCost> {
  const runs: UsageCost["rounds"] = [];
  for (let round = 0; round < rounds; round++) {
    const drains: Partial<Record<"on" | "off", UsageDrain>> = {};
    for (const mode of round % 2 ? (["off", "on"] as const) : (["on", "off"] as const)) {
      await freshBroker(ctx);
      const ids = await submitMany(ctx, ctx.spread, jobs, 8);
      const run = await drainBacklog(ctx, ids, 1, 600_000, { USAGE_AGGREGATES: mode === "on" ? "true" : "false" });
      drains[mode] = usageDrain(run);
      ctx.log(`usage aggregates ${mode}: ${Math.round(drains[mode].jobsPerSecond)} jobs/s`);
    }
    runs.push({ on: drains.on!, off: drains.off! });
  }
  const summaries = (mode: "on" | "off") => ({
    jobsPerSecond: summarize(runs.map((r) => r[mode].jobsPerSecond)),
    workerCpuMsPerJob: summarize(runs.map((r) => r[mode].workerCpuMsPerJob)),
    redisCpuMsPerJob: summarize(runs.map((r) => r[mode].redisCpuMsPerJob)),
  });
  const on = summaries("on");
  const off = summaries("off");
  return { jobs, rounds: runs, on, off, drainSlowdownPct: (1 - on.jobsPerSecond.p50 / off.jobsPerSecond.p50) * 100 };
}

function usageDrain(run: DrainRun): UsageDrain {
  const worker = Object.entries(run.procs).filter(([name]) => !["web", "redis", "broker"].includes(name));
  const workerCpu = worker.reduce((sum, [, p]) => sum + (p.cpuMs ?? NaN), 0);
  return {
    jobsPerSecond: run.jobsPerSecond,
    workerCpuMsPerJob: workerCpu / run.jobs,
    redisCpuMsPerJob: (run.procs.redis?.cpuMs ?? NaN) / run.jobs,
  };
}
