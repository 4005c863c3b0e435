import type { Redis } from "../../redis";
import { isTransientGraphFailure } from "../../graph/error";
import { untrustedGraphHostError } from "../../graph/hosts";
import { accountMissingError } from "../publication-error";
import { describeFailure, errorOf } from "../../graph/failure-view";
import { appendEvent, publicationKeys, readPublicationRecord, type PublicationRecord } from "../publication-record";
import { isSettledPublication } from "../status";
import { withRetries } from "./graph-retry";
import type { PublicationRun } from "./publication-run";
import { alreadyPublished } from "./recover-post";
import { done, failWith, next, waitFor, type StepResult } from "./step-result";
import { waitOrFail, waitsInstead } from "./waits";

/** The steps before any container: read the record, find the account's token, take the publication up. */

/**
 * A scheduled publication whose time has not come, or a watched container whose next read has
 * not: the scheduler enqueues it again then; no slot is held meanwhile (a message that arrives
 * early, e.g. a repeat, never reads a watched container sooner than its watch interval).
 */
export async function deferIfNotDue(
  redis: Redis,
  id: string,
  record: PublicationRecord,
  now: number,
): Promise<"deferred" | undefined> {
  const due =
    record.status === "SCHEDULED"
      ? Date.parse(record.publish_at)
      : record.status === "PROCESSING"
        ? Date.parse(record.watch_at)
        : Number.NaN;
  if (!(due > now)) return undefined;
  // LT: a read older than a reschedule may only make the wake-up earlier (the run defers again then), never later.
  await redis.zadd(publicationKeys.scheduled, "LT", due, id);
  return "deferred";
}

/** Reads the record as it is now (again, after a client's change won a race) and claims the run on it. */
export async function load(run: PublicationRun): Promise<StepResult> {
  const { redis } = run.deps;
  const record = await readPublicationRecord(redis, run.id);
  if (!record || isSettledPublication(record.status)) return done("skipped");
  if (await deferIfNotDue(redis, run.id, record, run.now())) return done("deferred");
  run.record = record;
  run.status = record.status;
  run.containerId = record.container_id;
  run.pollCount = record.poll_count;
  run.watchAt = Date.parse(record.watch_at) || 0;
  run.interrupted = !!record.active_run;
  await redis.hset(publicationKeys.state(run.id), "active_run", run.deps.workerId);
  return next("account");
}

/** The account's token and its Graph host; without a token the publication fails (account gone) or waits for a reconnect. */
export async function resolveAccount(run: PublicationRun): Promise<StepResult> {
  const { record } = run;
  const account = await run.deps.connected.find(record.tenant_id, record.account_id);
  if (!account) return failWith(accountMissingError(record.account_id));
  run.tokenVersion = account.tokenVersion;
  if (account.status === "needs_reconnect" || !account.accessToken)
    return waitFor({ reason: "needs_reconnect", why: account.error?.headline ?? "Graph refused its token" });
  run.account = { accountId: account.accountId, accessToken: account.accessToken };
  run.login = account.login;
  run.accountGraphUrl = account.graphUrl;
  const graph = run.deps.graphs.forAccount(account);
  if (!graph) {
    const refused = untrustedGraphHostError();
    return waitFor({ reason: "needs_reconnect", why: refused.headline, refused });
  }
  run.graph = graph;
  return next("start");
}

/** A due SCHEDULED publication moves to QUEUED; one another worker left half-way says so. Then where it stopped. */
export async function start(run: PublicationRun): Promise<StepResult> {
  const { record } = run;
  if (run.status === "SCHEDULED") {
    // Due only as read: a client that rescheduled, edited or cancelled it meanwhile wins, and the run reads it again.
    const due = await appendEvent(run.deps.redis, run.id, {
      status: "QUEUED",
      body: { kind: "step", step: { at: run.iso(), step: "due", detail: `publish_at ${record.publish_at} reached.` } },
      expect: { status: "SCHEDULED", publish_at: record.publish_at, caption: record.caption },
      fields: { scheduled_reason: "" },
      changes: { scheduled_reason: null },
    });
    if (due <= 0) return next("load");
    run.status = "QUEUED";
    await run.deps.redis.zrem(publicationKeys.scheduled, run.id);
  } else if (run.interrupted) {
    const where = `${run.status.toLowerCase()}${run.containerId ? `, container ${run.containerId}` : ""}`;
    await run.step(run.status, "picked_up", `Picked up again after the worker running it stopped (${where}).`);
  }
  if (!run.containerId) return next(record.retry_of_container ? "earlier-container" : "video");
  // Stopped between creating a resumable container and sending all its bytes: send them again from
  // offset 0. A container given a video_url (an upload_uri-less one) fetches its video itself.
  if (record.upload_id && record.upload_uri && !record.upload_done) return next("video");
  return next(run.status === "PUBLISHING" ? "check" : "poll");
}

/**
 * A retry after a failure that may have come after a publish: the earlier container is read
 * first, and PUBLISHED means the reel is out (never a second post); otherwise a new container.
 */
export async function checkEarlierContainer(run: PublicationRun): Promise<StepResult> {
  const containerId = run.record.retry_of_container;
  const attempt = await withRetries(run, "Reading the earlier container", () =>
    run.graph.readContainer(run.account, containerId, run.signal),
  );
  if (!attempt.ok) {
    if (waitsInstead(attempt.error)) return waitOrFail(attempt.error);
    if (!isTransientGraphFailure(attempt.error)) return next("video");
    const detail = `The earlier container ${containerId} could not be read (${describeFailure(attempt.error)}); not creating another before it is known whether it was published.`;
    return done(await run.timedOut(detail, errorOf(attempt.error)));
  }
  if (attempt.value.statusCode !== "PUBLISHED") return next("video");
  run.containerId = containerId;
  return done(await alreadyPublished(run));
}
