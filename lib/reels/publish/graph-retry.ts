import { backoff } from "../../backoff";
import { isGraphFailure, isTransientGraphFailure, type GraphFailure } from "../../graph/error";
import { describeFailure } from "../../graph/failure-view";
import type { PublicationRun } from "./publication-run";
import { waitsInstead } from "./waits";

/**
 * The Graph retry policy of the publish flow: a transient failure (GRAPH_ERRORS, or Graph's own
 * is_transient) is tried again with exponential backoff, each retry on the timeline; a failure
 * that makes the publication wait (quota, rate limit, refused token) or that no retry mends
 * comes back at once for the step to decide.
 */

export interface RetryPolicy {
  /** Tries after the first one. */
  retries: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 5, baseMs: 1000, maxMs: 30_000 };

export type { GraphFailure };
export type Attempt<T> = { ok: true; value: T } | { ok: false; error: GraphFailure };

/** A Graph failure, or rethrown: an abort (the lease is gone or the worker stops) or a bug. */
export function graphFailureOf(run: PublicationRun, error: unknown): GraphFailure {
  if (run.signal.aborted) throw run.signal.reason ?? error;
  if (!isGraphFailure(error)) throw error;
  return error;
}

export async function withRetries<T>(run: PublicationRun, what: string, call: () => Promise<T>): Promise<Attempt<T>> {
  for (let failures = 0; ;) {
    try {
      return { ok: true, value: await call() };
    } catch (thrown) {
      const error = graphFailureOf(run, thrown);
      if (waitsInstead(error) || !isTransientGraphFailure(error) || failures >= run.retry.retries)
        return { ok: false, error };
      failures++;
      const delay = backoff(run.retry, failures);
      await run.step(
        run.status,
        "retrying",
        `${what} failed (${describeFailure(error)}); try ${failures + 1} of ${run.retry.retries + 1} in ${delay} ms.`,
      );
      await run.sleep(delay, run.signal);
    }
  }
}
