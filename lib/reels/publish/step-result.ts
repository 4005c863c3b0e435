import type { GraphError, GraphPaused } from "../../graph/error";
import type { PublicationError } from "../publication";
import type { PublicationOutcome } from "./publication-run";

/** The steps of the flow, in the order a publication usually takes them (run-publication.ts maps each to its function). */
export type StepName =
  | "load"
  | "account"
  | "start"
  | "earlier-container"
  | "video"
  | "preflight"
  | "quota"
  | "create"
  | "upload"
  | "poll"
  | "watch"
  | "check"
  | "publish";

/** Why a publication waits instead of failing or holding a worker: SCHEDULED with that reason, or PROCESSING while a slow container is watched (see waits.ts). */
export type Wait =
  | {
      reason: "needs_reconnect";
      why: string;
      /** Graph's refusal of this run's token: the account is marked with it first. */ refused?: PublicationError;
    }
  | { reason: "quota"; why: string; quotaDurationS: number | null }
  | { reason: "rate_limited"; error: GraphError | GraphPaused }
  /** Not SCHEDULED: a container still IN_PROGRESS after the first polls, read again at `at` (REEL_WATCH_INTERVAL_MS) with no worker held meanwhile. */
  | { reason: "watch"; at: number };

/**
 * What a step decides, the one thing it returns: go on with another step, wait until a time or a
 * reconnect, fail with an error, or stop with an outcome the step has already written.
 */
export type StepResult =
  | { kind: "continue"; next: StepName }
  | { kind: "wait"; wait: Wait }
  | { kind: "fail"; error: PublicationError }
  | { kind: "done"; outcome: PublicationOutcome };

export const next = (step: StepName): StepResult => ({ kind: "continue", next: step });
export const waitFor = (wait: Wait): StepResult => ({ kind: "wait", wait });
export const failWith = (error: PublicationError): StepResult => ({ kind: "fail", error });
export const done = (outcome: PublicationOutcome): StepResult => ({ kind: "done", outcome });
