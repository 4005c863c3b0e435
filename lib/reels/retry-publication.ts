import type { Producer } from "kafkajs";
import { ApiError, brokerUnavailable } from "../errors";
import type { Redis } from "../redis";
import type { PublicationView } from "./publication";
import { sendPublicationRequests } from "./publication-input";
import { appendEvent, readPublicationRecord, type PublicationRecord } from "./publication-record";
import { announcePublication, isAnnounced, markAnnounced, settledAnnouncementOf } from "./publish/announce";
import { readPublication } from "./read-publication";

export interface RetryPublicationDeps {
  redis: Redis;
  producer: () => Promise<Producer>;
  now?: () => number;
}

/** Statuses a client may retry from: the flow gave up on them. */
const RETRYABLE = ["FAILED", "TIMED_OUT"] as const;

/**
 * Tries a FAILED or TIMED_OUT publication again with a new container: same publication id, its
 * timeline kept and continued. The container that failed is remembered, and the flow reads it
 * before making another: if it turns out PUBLISHED (an answer was lost), that is the success, and
 * nothing is published twice.
 */
export async function retryPublication(
  deps: RetryPublicationDeps,
  tenantId: string,
  id: string,
): Promise<PublicationView | undefined> {
  const now = deps.now ?? Date.now;
  const view = await readPublication(deps.redis, tenantId, id);
  if (!view) return undefined;
  const from = view.status;
  if (!(RETRYABLE as readonly string[]).includes(from))
    throw new ApiError("conflict", `Only a FAILED or TIMED_OUT publication can be retried; this one is ${from}.`);
  const state = await readPublicationRecord(deps.redis, id);
  if (!state) return undefined;
  await announceLeftOutcome(deps, state, "retried");
  const moved = await reopenForRetry(deps.redis, id, from, state, now());
  if (moved <= 0) throw new ApiError("conflict", "The publication changed meanwhile; read it again.");

  try {
    await sendPublicationRequests(await deps.producer(), [
      { publication_id: id, tenant_id: tenantId, account_id: state.account_id },
    ]);
  } catch {
    await undoRetry(deps.redis, id, from, state, now());
    throw brokerUnavailable(
      "The publishing log is unreachable right now; the publication was not retried. Try again shortly.",
    );
  }
  return readPublication(deps.redis, tenantId, id);
}

/**
 * Announces the outcome a retry or a resume leaves, when nothing has yet (its record's `announced`):
 * a run that died between its final write and its announcement left it unannounced, and once the
 * publication moved on, that run's redelivery finds nothing settled to announce. Nothing has
 * changed yet when the broker does not take it.
 */
export async function announceLeftOutcome(
  deps: { redis: Redis; producer: () => Promise<Producer> },
  state: PublicationRecord,
  what: "retried" | "resumed",
): Promise<void> {
  if (isAnnounced(state)) return;
  const announcement = await settledAnnouncementOf(deps.redis, state);
  try {
    await announcePublication(await deps.producer(), announcement);
  } catch {
    throw brokerUnavailable(
      `The publishing log is unreachable right now; the publication was not ${what}. Try again shortly.`,
    );
  }
  await markAnnounced(deps.redis, state);
}

/** Moves the publication back to QUEUED with a step saying so, forgetting its container (remembered as retry_of_container) and its error; > 0 when it moved. */
function reopenForRetry(
  redis: Redis,
  id: string,
  from: PublicationView["status"],
  state: PublicationRecord,
  at: number,
): Promise<number> {
  const earlier = state.container_id;
  return appendEvent(redis, id, {
    status: "QUEUED",
    expect: { status: from },
    reopen: true,
    body: {
      kind: "step",
      step: {
        at: new Date(at).toISOString(),
        step: "retried",
        detail: earlier
          ? `Retried: container ${earlier} is checked first, then a new container is made.`
          : "Retried: a new container is made.",
      },
    },
    fields: {
      container_id: "",
      retry_of_container: earlier || state.retry_of_container,
      error: "",
      last_status_code: "",
      poll_round_start: String(state.poll_count),
      watch_at: "",
      scheduled_reason: "",
      rate_limited_waits: "0",
      upload_done: "",
      upload_uri: "",
    },
    changes: { container_id: null, error: null, scheduled_reason: null },
  });
}

/**
 * Puts the publication back as it was when its message could not be sent; the caller reports the
 * failure. Its updated_at too: the outcome it returns to is the same arrival, already counted in
 * usage and announced under that time (a new one would count and announce it again).
 */
async function undoRetry(
  redis: Redis,
  id: string,
  from: PublicationView["status"],
  state: PublicationRecord,
  at: number,
): Promise<void> {
  const earlier = state.container_id;
  await appendEvent(redis, id, {
    status: from,
    expect: { status: "QUEUED" },
    body: {
      kind: "step",
      step: {
        at: new Date(at).toISOString(),
        step: "retry_failed",
        detail: `The publishing log was unreachable; the publication is still ${from}.`,
      },
    },
    fields: {
      container_id: earlier,
      error: state.error ? JSON.stringify(state.error) : "",
      updated_at: state.updated_at,
    },
    changes: { container_id: earlier || null, error: state.error },
    // The timeline entry is a courtesy; the caller throws the broker error either way.
  }).catch(() => {});
}
