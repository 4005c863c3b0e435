import type { ContainerStatus } from "../../graph/client";
import { GraphError, isTransientGraphFailure } from "../../graph/error";
import { containerError, expiredError } from "../publication-error";
import { describeFailure } from "../../graph/failure-view";
import { CONTAINER_LIFETIME_MS, publicationKeys } from "../publication-record";
import { backoff } from "../../backoff";
import { graphFailureOf, withRetries, type Attempt } from "./graph-retry";
import type { PublicationRun } from "./publication-run";
import { alreadyPublished } from "./recover-post";
import { done, failWith, next, waitFor, type StepResult } from "./step-result";
import { waitOrFail, waitsInstead } from "./waits";

/**
 * Poll until FINISHED, then publish. The round's first polls come pollIntervalMs apart
 * (REEL_POLL_INTERVAL_MS × REEL_POLL_ATTEMPTS: 5 s × 30); a container still IN_PROGRESS after them
 * is watched: read once per watchIntervalMs (REEL_WATCH_INTERVAL_MS, a minute, as Meta advises),
 * no worker held between reads, until it settles or its 24 h life ends (only then TIMED_OUT).
 * After a crash in PUBLISHING (or a failed publish) the container is read before anything else
 * (`check`): PUBLISHED means the earlier publish went through.
 */

/** Waits a poll interval, then reads the container; past the round's first polls, the container is watched instead. */
export async function pollAfterInterval(run: PublicationRun): Promise<StepResult> {
  if (run.watching) return next("watch");
  await run.sleep(run.deps.pollIntervalMs, run.signal);
  return checkContainer(run);
}

/**
 * A slow container: read it when its watch interval has passed, otherwise let the scheduler bring
 * the publication back then. A container that never settled in its life ends TIMED_OUT, never
 * with a blind publish.
 */
export async function watchContainer(run: PublicationRun): Promise<StepResult> {
  const now = run.now();
  const expiresAt = containerExpiresAt(run);
  if (now >= expiresAt) {
    const detail = `The container was still not FINISHED when its 24 h life ended (${new Date(expiresAt).toISOString()}), after ${run.pollCount} status reads; it was not published.`;
    return done(await run.timedOut(detail, null));
  }
  if (run.watchAt > now) return waitFor({ reason: "watch", at: run.watchAt });
  return checkContainer(run);
}

/** Graph expires a container 24 h after its creation; an unknown creation time never ends the watch by itself. */
function containerExpiresAt(run: PublicationRun): number {
  const createdAt = Date.parse(run.record.container_created_at);
  return Number.isNaN(createdAt) ? Number.POSITIVE_INFINITY : createdAt + CONTAINER_LIFETIME_MS;
}

/** One status read, recorded as a poll attempt, and what it means for the flow. */
export async function checkContainer(run: PublicationRun): Promise<StepResult> {
  const attempt = await readContainer(run);
  if (!attempt.ok) {
    if (!isTransientGraphFailure(attempt.error) || waitsInstead(attempt.error)) return waitOrFail(attempt.error);
    // Graph kept failing: the container may still settle; read it again a watch interval from now.
    // PROCESSING (also after a crash in PUBLISHING): every way on reads the container before any publish.
    const at = Math.min(run.now() + run.watchIntervalMs, containerExpiresAt(run));
    run.watchAt = at;
    await run.step(
      "PROCESSING",
      "read_failed",
      `Graph kept failing while the container was read (${describeFailure(attempt.error)}); reading it again at ${new Date(at).toISOString()}.`,
      {
        watch_at: new Date(at).toISOString(),
      },
    );
    return waitFor({ reason: "watch", at });
  }
  const read = attempt.value;
  switch (read.statusCode) {
    case "FINISHED":
      return next("publish");
    case "PUBLISHED":
      return done(await alreadyPublished(run));
    case "ERROR":
      return failWith(containerError(read));
    case "EXPIRED":
      return failWith(expiredError(read.fbtraceId));
    default:
      run.status = "PROCESSING";
      if (run.pollCount - run.record.poll_round_start === run.deps.pollAttempts) {
        const { pollAttempts, pollIntervalMs } = run.deps;
        const expiresAt = containerExpiresAt(run);
        const until = Number.isFinite(expiresAt)
          ? ` or its 24 h life ends at ${new Date(expiresAt).toISOString()}`
          : "";
        await run.step(
          "PROCESSING",
          "watching",
          `Still ${read.statusCode ?? "not FINISHED"} after ${pollAttempts} polls ${pollIntervalMs} ms apart; reading it once every ${Math.round(run.watchIntervalMs / 1000)} s until it settles${until}.`,
        );
      }
      return next("poll");
  }
}

/** A status read through withRetries, written as a poll; past the round's first polls it also says when the next read may come (watch_at). */
async function readContainer(run: PublicationRun): Promise<Attempt<ContainerStatus>> {
  const attempt = await withRetries(run, "Reading the container's status", () =>
    run.graph.readContainer(run.account, run.containerId, run.signal),
  );
  if (!attempt.ok) return attempt;
  const read = attempt.value;
  run.pollCount++;
  const statusCode = read.statusCode ?? "";
  const at = run.now();
  const fields: Record<string, string> = { poll_count: String(run.pollCount), last_status_code: statusCode };
  if (run.watching) {
    // No read after the container's end: the run that comes then ends it TIMED_OUT.
    run.watchAt = Math.min(at + run.watchIntervalMs, containerExpiresAt(run));
    fields.watch_at = new Date(run.watchAt).toISOString();
  }
  await run.write(
    {
      kind: "poll",
      poll: {
        attempt: run.pollCount,
        at: new Date(at).toISOString(),
        status_code: read.statusCode,
        status: read.status,
      },
    },
    run.status,
    fields,
    { last_status_code: statusCode },
  );
  return attempt;
}

/** Records the `publishing` step first, so a worker that takes over knows a publish may have happened. */
export async function publishContainer(run: PublicationRun): Promise<StepResult> {
  await run.step("PUBLISHING", "publishing", `Publishing container ${run.containerId}.`);
  let postId: string;
  try {
    ({ id: postId } = await run.graph.publishContainer(run.account, run.containerId, run.signal));
  } catch (thrown) {
    const error = graphFailureOf(run, thrown);
    if (error instanceof GraphError && error.action === "not-ready") {
      // Not FINISHED after all (or already published): the next poll says which.
      await run.step(
        "PROCESSING",
        "not_ready",
        `Graph refused to publish: ${error.message} (${error.code}/${error.subcode ?? "-"}); polling again.`,
      );
      return next("poll");
    }
    if (waitsInstead(error) || !isTransientGraphFailure(error) || run.publishFailures >= run.retry.retries)
      return waitOrFail(error);
    run.publishFailures++;
    const delay = backoff(run.retry, run.publishFailures);
    await run.step(
      "PUBLISHING",
      "retrying",
      `Publishing failed (${describeFailure(error)}); reading the container again in ${delay} ms before another try.`,
    );
    await run.sleep(delay, run.signal);
    return next("check");
  }
  // Kept at once: a worker taking over after this point finds the post id without asking Graph.
  await run.deps.redis.hset(publicationKeys.state(run.id), "post_id", postId);
  return done(await run.published(postId, undefined, `Published as post ${postId}.`));
}
