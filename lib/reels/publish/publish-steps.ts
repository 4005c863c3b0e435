import type { ContainerStatus } from "../graph-client";
import { GraphError, isTransientGraphFailure } from "../graph-error";
import { containerError, describeFailure, errorOf, expiredError } from "../publication-error";
import { publicationKeys } from "../publication-record";
import { backoff, graphFailureOf, withRetries, type Attempt } from "./graph-retry";
import type { PublicationRun } from "./publication-run";
import { alreadyPublished } from "./recover-post";
import { done, failWith, next, type StepResult } from "./step-result";
import { waitOrFail, waitsInstead } from "./waits";

/**
 * Poll until FINISHED, then publish. After a crash in PUBLISHING (or a failed publish) the
 * container is read before anything else (`check`): PUBLISHED means the earlier publish went through.
 */

/** Waits a poll interval, then reads the container; out of attempts, the run ends TIMED_OUT, never with a blind publish. */
export async function pollAfterInterval(run: PublicationRun): Promise<StepResult> {
  const { pollAttempts, pollIntervalMs } = run.deps;
  if (run.pollCount - run.record.poll_round_start >= pollAttempts) {
    return done(await run.timedOut(`The container was not FINISHED after ${pollAttempts} polls, ${pollIntervalMs} ms apart; it was not published.`, null));
  }
  await run.sleep(pollIntervalMs, run.signal);
  return checkContainer(run);
}

/** One status read, recorded as a poll attempt, and what it means for the flow. */
export async function checkContainer(run: PublicationRun): Promise<StepResult> {
  const attempt = await readContainer(run);
  if (!attempt.ok) {
    if (!isTransientGraphFailure(attempt.error) || waitsInstead(attempt.error)) return waitOrFail(attempt.error);
    return done(await run.timedOut(`Graph kept failing while the container was read (${describeFailure(attempt.error)}); resume to poll again.`, errorOf(attempt.error)));
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
      return next("poll");
  }
}

async function readContainer(run: PublicationRun): Promise<Attempt<ContainerStatus>> {
  const attempt = await withRetries(run, "Reading the container's status", () => run.deps.graph.readContainer(run.containerId, run.account.accessToken, run.signal));
  if (!attempt.ok) return attempt;
  const read = attempt.value;
  run.pollCount++;
  const statusCode = read.statusCode ?? "";
  await run.write(
    { kind: "poll", poll: { attempt: run.pollCount, at: run.iso(), status_code: read.statusCode, status: read.status } },
    run.status,
    { poll_count: String(run.pollCount), last_status_code: statusCode },
    { last_status_code: statusCode },
  );
  return attempt;
}

/** Records the `publishing` step first, so a worker that takes over knows a publish may have happened. */
export async function publishContainer(run: PublicationRun): Promise<StepResult> {
  await run.step("PUBLISHING", "publishing", `Publishing container ${run.containerId}.`);
  let postId: string;
  try {
    ({ id: postId } = await run.deps.graph.publishContainer(run.account, run.containerId, run.signal));
  } catch (thrown) {
    const error = graphFailureOf(run, thrown);
    if (error instanceof GraphError && error.action === "not-ready") {
      // Not FINISHED after all (or already published): the next poll says which.
      await run.step("PROCESSING", "not_ready", `Graph refused to publish: ${error.message} (${error.code}/${error.subcode ?? "-"}); polling again.`);
      return next("poll");
    }
    if (waitsInstead(error) || !isTransientGraphFailure(error) || run.publishFailures >= run.retry.retries) return waitOrFail(error);
    run.publishFailures++;
    const delay = backoff(run.retry, run.publishFailures);
    await run.step("PUBLISHING", "retrying", `Publishing failed (${describeFailure(error)}); reading the container again in ${delay} ms before another try.`);
    await run.sleep(delay, run.signal);
    return next("check");
  }
  // Kept at once: a worker taking over after this point finds the post id without asking Graph.
  await run.deps.redis.hset(publicationKeys.state(run.id), "post_id", postId);
  return done(await run.published(postId, undefined, `Published as post ${postId}.`));
}
