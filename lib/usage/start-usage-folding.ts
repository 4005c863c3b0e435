import type { RunningSchedule, StartSchedule } from "../worker/worker-context";
import { withTimeout } from "../with-timeout";
import { FOLD_EVERY_MS, foldUsage } from "./fold-usage";

const STOP_FOLD_MS = 2_000;

/**
 * One of the worker's schedules: the fold of the pending usage counts (fold-usage.ts), every
 * second and once more as it stops. Counts a fold leaves (Redis away, or arriving after the last
 * one) wait in the list for the next fold, a worker's or a reader's: nothing is lost.
 */
export const startUsageFolding: StartSchedule = async ({ redis, log }): Promise<RunningSchedule> => {
  let running: Promise<void> | undefined;
  let failing = false;
  const fold = () =>
    (running ??= foldUsage(redis)
      .then(
        () => void (failing = false),
        (error: unknown) => {
          if (!failing) log("warn", "could not fold the usage counts; the next tick tries again", { error });
          failing = true;
        },
      )
      .finally(() => (running = undefined)));
  const timer = setInterval(fold, FOLD_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      // A Redis that is away must not hold the worker's exit: what is left waits for the next fold.
      await withTimeout((running ?? Promise.resolve()).then(fold), STOP_FOLD_MS, "the last usage fold").catch(() => {});
    },
  };
};
