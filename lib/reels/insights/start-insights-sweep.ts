import type { RunningSchedule, StartSchedule } from "../../worker/worker-context";
import { sweepReelInsights } from "./insights-sweep";

/** How often a worker tries the sweep; the lease lets one of them do it, and each reel is read once a day. */
export const SWEEP_TICK_MS = 5 * 60_000;
const SWEEP_BATCH = 100;

/** The worker's insights sweep (insights-sweep.ts): one of its schedules. */
export const startInsightsSweep: StartSchedule = async (ctx): Promise<RunningSchedule> => {
  const { redis, log, workerId, services } = ctx;
  const deps = { redis, graphs: services.graphs, connected: services.accounts, now: () => Date.now() };
  const stopping = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = sweepReelInsights(
      deps,
      { owner: workerId, leaseMs: 3 * SWEEP_TICK_MS, batch: SWEEP_BATCH },
      stopping.signal,
    )
      .then(({ read }) => {
        if (read > 0) log("info", "insights sweep read reels", { read });
      })
      .catch((error: unknown) => log("warn", "insights sweep failed; the next tick tries again", { error }));
  };
  const timer = setInterval(tick, SWEEP_TICK_MS);
  return {
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await running;
    },
  };
};
