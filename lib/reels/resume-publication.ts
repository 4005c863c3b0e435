import type { Producer } from "kafkajs";
import { ApiError, brokerUnavailable } from "../errors";
import type { Redis } from "../redis";
import type { PublicationView } from "./publication";
import { appendEvent, readPublicationRecord } from "./publication-record";
import { readPublication } from "./read-publication";
import { announceLeftOutcome } from "./retry-publication";
import { sendPublicationRequests } from "./publication-input";
import { containerAlive } from "./publication-record";

export interface ResumePublicationDeps {
  redis: Redis;
  producer: () => Promise<Producer>;
  now?: () => number;
}

/**
 * Polls a TIMED_OUT publication's container again, with a fresh budget of attempts: moves it back
 * to PROCESSING and puts it on the log for a worker. Only while the container lives (24 h): after
 * that Graph would answer EXPIRED, and a new publication is the way forward.
 */
export async function resumePublication(
  deps: ResumePublicationDeps,
  tenantId: string,
  id: string,
): Promise<PublicationView | undefined> {
  const now = (deps.now ?? Date.now)();
  const view = await readPublication(deps.redis, tenantId, id);
  if (!view) return undefined;
  if (view.status !== "TIMED_OUT")
    throw new ApiError("conflict", `Only a TIMED_OUT publication can be resumed; this one is ${view.status}.`);
  const state = await readPublicationRecord(deps.redis, id);
  if (!state) return undefined;
  if (!containerAlive(state, now))
    throw new ApiError("conflict", "The container has expired (24 h after its creation); publish the video again.");
  await announceLeftOutcome(deps, state, "resumed");

  const at = new Date(now).toISOString();
  const moved = await appendEvent(deps.redis, id, {
    status: "PROCESSING",
    expect: { status: "TIMED_OUT" },
    body: {
      kind: "step",
      step: { at, step: "resumed", detail: `Resumed: polling container ${state.container_id} again.` },
    },
    fields: { poll_round_start: String(state.poll_count), watch_at: "", error: "" },
    changes: { error: null },
  });
  if (moved <= 0) throw new ApiError("conflict", "The publication changed meanwhile; read it again.");

  try {
    await sendPublicationRequests(await deps.producer(), [
      { publication_id: id, tenant_id: tenantId, account_id: state.account_id },
    ]);
  } catch {
    await appendEvent(deps.redis, id, {
      status: "TIMED_OUT",
      expect: { status: "PROCESSING" },
      body: {
        kind: "step",
        step: {
          at: new Date((deps.now ?? Date.now)()).toISOString(),
          step: "resume_failed",
          detail: "The publishing log was unreachable; the publication is still TIMED_OUT.",
        },
      },
      // updated_at as it was: the same TIMED_OUT, already announced under that time.
      fields: { error: state.error ? JSON.stringify(state.error) : "", updated_at: state.updated_at },
      changes: { error: state.error },
      // The timeline entry is a courtesy; the caller gets the error below either way.
    }).catch(() => {});
    throw brokerUnavailable(
      "The publishing log is unreachable right now; the publication was not resumed. Try again shortly.",
    );
  }
  return readPublication(deps.redis, tenantId, id);
}
