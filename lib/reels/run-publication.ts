import { runUnderLease } from "../lease";
import { abortableSleep } from "../sleep";
import { announceSettled, isAnnounced } from "./publish/announce";
import { checkQuota, createContainer, locateVideo, preflight, sendUpload } from "./publish/container-steps";
import { PublicationRun, RecordClosed, type PublicationDeps, type PublicationOutcome } from "./publish/publication-run";
import { checkContainer, pollAfterInterval, publishContainer, watchContainer } from "./publish/publish-steps";
import { checkEarlierContainer, deferIfNotDue, load, resolveAccount, start } from "./publish/start-steps";
import type { StepName, StepResult } from "./publish/step-result";
import { waitUntil } from "./publish/waits";
import { publicationKeys, readPublicationRecord, type PublicationRecord } from "./publication-record";
import { PUBLICATION_WORK } from "./submit-publication";
import { revealWork } from "../accept/accept-work";
import type { Redis } from "../redis";
import { isSettledPublication } from "./status";
import { recordReelUsage } from "../usage/record-usage";

export type { PublicationDeps, PublicationOutcome } from "./publish/publication-run";
export { DEFAULT_RETRY, type RetryPolicy } from "./publish/graph-retry";
export { DEFAULT_RATE_LIMIT_BACKOFF } from "./publish/waits";
export { DEFAULT_WATCH_INTERVAL_MS } from "./publish/publication-run";

export interface RunControl {
  /** Keeps the consumer's group membership while the flow runs. */
  heartbeat: () => Promise<void>;
  /** Aborts when the worker stops: the publication is handed back, not settled. */
  shutdown: AbortSignal;
  /** Names this run: the owner of the publication's lease (see runUnderLease). */
  runId: string;
}

/**
 * The flow, one step at a time (lib/reels/publish/). Each step returns one StepResult: the next
 * step, a wait (waits.ts), a failure (written here) or an outcome it wrote itself. A new step is a
 * name in StepName, a function here, and a `next(...)` from the step before it.
 */
const STEPS: Record<StepName, (run: PublicationRun) => Promise<StepResult>> = {
  load,
  account: resolveAccount,
  start,
  "earlier-container": checkEarlierContainer,
  video: locateVideo,
  preflight,
  quota: checkQuota,
  create: createContainer,
  upload: sendUpload,
  poll: pollAfterInterval,
  watch: watchContainer,
  check: checkContainer,
  publish: publishContainer,
};

/**
 * The steps, then the announcement of the outcome they wrote (webhooks send it), as a job's audit
 * event follows its final write: the publication as that write left it, not as it is by now.
 */
async function runFlow(run: PublicationRun): Promise<PublicationOutcome> {
  const outcome = await runSteps(run).catch((error) => {
    if (error instanceof RecordClosed) return "skipped" as const;
    throw error;
  });
  // Set by the final write (published, failed, timed out), the only outcomes announced.
  if (run.settled) {
    await announceSettled(run.deps.producer, run.deps.redis, run.settled);
  }
  return outcome;
}

async function runSteps(run: PublicationRun): Promise<PublicationOutcome> {
  for (let step: StepName = "load"; ;) {
    const result: StepResult = await STEPS[step](run);
    switch (result.kind) {
      case "continue":
        step = result.next;
        break;
      case "wait":
        return waitUntil(run, result.wait);
      case "fail":
        return run.fail(result.error);
      case "done":
        return result.outcome;
    }
  }
}

/**
 * Runs one publication as far as it can go: create the container (once), poll it every
 * `pollIntervalMs` up to `pollAttempts` times, then once per `watchIntervalMs` (between reads the
 * scheduler holds it, not a worker) until it settles or expires, publish it when FINISHED (once). Progress lives in
 * Redis, so a redelivery after a crash resumes where the last worker stopped: it never creates a
 * second container while one exists, and it reads the container before any publish it cannot be
 * sure of. A lease keeps two workers off the same publication.
 */
export async function runPublication(
  deps: PublicationDeps,
  publicationId: string,
  control: RunControl,
): Promise<PublicationOutcome> {
  const { redis } = deps;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? abortableSleep;
  const settleDeadline = now() + (deps.submitSettleMs ?? 30_000);

  const outcome = await runUnderLease<PublicationOutcome>(
    {
      redis,
      key: publicationKeys.lease(publicationId),
      owner: control.runId,
      ms: deps.leaseMs ?? 15_000,
      heartbeat: control.heartbeat,
      shutdown: control.shutdown,
    },
    {
      async check() {
        for (;;) {
          const record = await readPublicationRecord(redis, publicationId);
          if (!record) {
            deps.log("warn", "skipping a publication with no record (not accepted, or expired)", {
              publication_id: publicationId,
            });
            return "skipped";
          }
          // The message can overtake the submitter's last write; give it a moment to settle either way.
          if (record.submitting && now() < settleDeadline) {
            // A missed heartbeat costs nothing here, and a sleep cut short by the shutdown is checked just below.
            await control.heartbeat().catch(() => {});
            await sleep(200, control.shutdown).catch(() => {});
            if (control.shutdown.aborted) return "handed-back";
            continue;
          }
          // On the log but never revealed (its submitter died after the broker's ack): shown now, whatever comes
          // next, so the client's retry with its Idempotency-Key finds it (a scheduled one too, not only once due).
          if (record.submitting) await revealPublication(redis, publicationId, record, now());
          if (isSettledPublication(record.status)) {
            // A run that died between its final write and its announcement left the message uncommitted: count and
            // announce it now (unless the record says it was announced: the run died after, before its commit).
            if (deps.recordUsage !== false) await recordReelUsage(redis, record);
            if (!isAnnounced(record)) await announceSettled(deps.producer, redis, record);
            return "skipped";
          }
          return deferIfNotDue(redis, publicationId, record, now());
        }
      },
      run: (signal) => runFlow(new PublicationRun(deps, publicationId, signal, now, sleep)),
    },
    "handed-back",
  );
  if (outcome === "handed-back") deps.log("info", "handing a publication back", { publication_id: publicationId });
  return outcome;
}

/** Shows a publication its submitter accepted but never revealed, as the submitter would have. */
async function revealPublication(
  redis: Redis,
  id: string,
  record: Pick<PublicationRecord, "tenant_id" | "created_at">,
  nowMs: number,
): Promise<void> {
  await revealWork(redis, PUBLICATION_WORK, record.tenant_id, id, Date.parse(record.created_at) || nowMs, nowMs);
}
