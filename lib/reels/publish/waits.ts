import { backoff } from "../../backoff";
import { announcePublication } from "./announce";
import { nextQuotaSlotAt } from "../../accounts/account-quota";
import { connectedAccountKeys } from "../../accounts/connected-accounts";
import { GraphError, graphFailureAction, GraphPaused, GraphTransportError, type GraphFailure } from "../../graph/error";
import type { PublicationError, ScheduledReason } from "../publication";
import { describeFailure, errorOf } from "../../graph/failure-view";
import { publicationKeys } from "../publication-record";
import { releaseWaitingPublications } from "../release-waiting-publications";
import type { PublicationOutcome, PublicationRun } from "./publication-run";
import { failWith, waitFor, type StepResult, type Wait } from "./step-result";

/**
 * The waits: a publication that Graph refuses for a reason time or a person mends (the publishing
 * quota, a rate limit, a refused token) is not failed but SCHEDULED with that reason, holding no
 * worker: the scheduler brings it back at publish_at, or a reconnect releases it. A slow container
 * is watched the same way, PROCESSING: the scheduler brings it back for its next status read.
 */

export const DEFAULT_RATE_LIMIT_BACKOFF = { baseMs: 60_000, maxMs: 15 * 60_000 };

const WAITING_ACTIONS = new Set(["wait-quota", "wait-rate-limit", "reconnect-account"]);

/**
 * Failures that make the publication wait rather than fail: what GRAPH_ERRORS says (or an upload's
 * refused token, or a call the pacer held back), or a transient error whose usage headers name a wait.
 */
export function waitsInstead(error: GraphFailure): boolean {
  if (error instanceof GraphTransportError) return false;
  const action = graphFailureAction(error);
  if (WAITING_ACTIONS.has(action)) return true;
  return error instanceof GraphError && action === "retry" && (error.usage?.regainAccessMs ?? 0) > 0;
}

/** The wait a Graph failure calls for, or failing with it. */
export function waitOrFail(error: GraphFailure): StepResult {
  if (!waitsInstead(error)) return failWith(errorOf(error));
  const action = graphFailureAction(error);
  if (action === "wait-quota" && error instanceof GraphError)
    return waitFor({
      reason: "quota",
      why: `Graph refused: ${error.message} (${error.code}/${error.subcode ?? "-"})`,
      quotaDurationS: null,
    });
  if (action === "reconnect-account")
    return waitFor({ reason: "needs_reconnect", why: describeFailure(error), refused: errorOf(error) });
  if (error instanceof GraphError || error instanceof GraphPaused) return waitFor({ reason: "rate_limited", error });
  return failWith(errorOf(error));
}

export function waitUntil(run: PublicationRun, wait: Wait): Promise<PublicationOutcome> {
  switch (wait.reason) {
    case "needs_reconnect":
      return waitForReconnect(run, wait.why, wait.refused);
    case "quota":
      return waitForQuota(run, wait.why, wait.quotaDurationS);
    case "rate_limited":
      return waitForRateLimit(run, wait.error);
    case "watch":
      return watchLater(run, wait.at);
  }
}

/** Waits, SCHEDULED with its reason, until `until` (the scheduler brings it back) or, with null, until someone acts. */
async function scheduleWait(
  run: PublicationRun,
  reason: ScheduledReason,
  until: number | null,
  detail: string,
): Promise<PublicationOutcome> {
  const publishAt = until === null ? "" : new Date(until).toISOString();
  const fields = {
    publish_at: publishAt,
    scheduled_reason: reason,
    poll_round_start: String(run.pollCount),
    active_run: "",
  };
  await run.step("SCHEDULED", "waiting", detail, fields, { publish_at: publishAt || null, scheduled_reason: reason });
  if (until !== null) await run.deps.redis.zadd(publicationKeys.scheduled, until, run.id);
  return "deferred";
}

async function waitForReconnect(
  run: PublicationRun,
  why: string,
  refused: PublicationError | undefined,
): Promise<PublicationOutcome> {
  const { redis, connected, log } = run.deps;
  const { account_id: accountId, tenant_id: tenantId } = run.record;
  if (refused) await connected.markNeedsReconnect(run.account.accountId, run.tokenVersion, run.withoutToken(refused));
  const outcome = await scheduleWait(
    run,
    "needs_reconnect",
    null,
    `The account needs reconnecting (${why}); the publication waits and goes on once it is connected again.`,
  );
  await redis.sadd(connectedAccountKeys.waiting(accountId), run.id);
  // Reconnected between the refusal and the line above: its release may have missed this one.
  const now = await connected.find(tenantId, accountId);
  if (now?.status === "connected" && now.tokenVersion !== run.tokenVersion)
    await releaseWaitingPublications(redis, accountId, run.now());
  // Only the owner's notice is lost if the broker is away: the wait itself is written and goes on.
  await announcePublication(run.deps.producer, {
    publication_id: run.id,
    tenant_id: tenantId,
    kind: "needs_reconnect",
    status: "SCHEDULED",
    account_id: accountId,
  }).catch((error) =>
    log("warn", "could not announce that the publication waits for a reconnect", { publication_id: run.id, error }),
  );
  return outcome;
}

async function waitForQuota(
  run: PublicationRun,
  why: string,
  quotaDurationS: number | null,
): Promise<PublicationOutcome> {
  const until = await nextQuotaSlotAt(
    run.deps.redis,
    run.record.account_id,
    (quotaDurationS ?? 86400) * 1000,
    run.now(),
  );
  return scheduleWait(
    run,
    "quota",
    until,
    `${why}; waiting until the window frees a slot at ${new Date(until).toISOString()}.`,
  );
}

async function waitForRateLimit(run: PublicationRun, error: GraphError | GraphPaused): Promise<PublicationOutcome> {
  if (error instanceof GraphPaused) {
    // Held back before the call: Graph said when access comes back; a few seconds' jitter keeps the accounts apart.
    const until = Math.max(error.until, run.now() + 1000) + Math.round(Math.random() * 5000);
    const whose = error.scope === "app" ? "the app's" : "the account's";
    return scheduleWait(
      run,
      "rate_limited",
      until,
      `Graph's usage headers put ${whose} calls at the limit; waiting until ${new Date(until).toISOString()} before calling again.`,
    );
  }
  const waits = run.record.rate_limited_waits + 1;
  await run.deps.redis.hset(publicationKeys.state(run.id), "rate_limited_waits", String(waits));
  run.record.rate_limited_waits = waits;
  const policy = { ...DEFAULT_RATE_LIMIT_BACKOFF, ...run.deps.rateLimit };
  const ceiling = backoff(policy, waits);
  // Equal jitter: accounts refused together do not all come back in the same second.
  const delay = Math.max(error.usage?.regainAccessMs ?? 0, Math.round(ceiling / 2 + Math.random() * (ceiling / 2)));
  return scheduleWait(
    run,
    "rate_limited",
    run.now() + delay,
    `Graph asked to slow down (${describeFailure(error)}); trying again in ${Math.round(delay / 1000)} s.`,
  );
}

/**
 * A container still IN_PROGRESS after the first polls: the publication stays PROCESSING, no worker
 * holds it, and the scheduler brings it back at `at` for its next status read (publish-steps.ts).
 */
async function watchLater(run: PublicationRun, at: number): Promise<PublicationOutcome> {
  await run.deps.redis
    .multi()
    .hset(publicationKeys.state(run.id), "active_run", "")
    .zadd(publicationKeys.scheduled, at, run.id)
    .exec();
  return "deferred";
}
