import { randomBytes } from "node:crypto";
import { z } from "zod";
import { brandedError } from "../brand";
import type { GraphUsage } from "./usage";
import { classifyGraphError, describeGraphError, UNKNOWN, type GraphErrorAction } from "./error-table";
import { GraphUploadError } from "./upload-error";

/**
 * Graph's error object and the failures of a Graph call. The sandbox answers with these; the publish
 * flow reads them back from the real interface or the sandbox alike (the codes: error-table.ts).
 */

export interface GraphErrorBody {
  message: string;
  type: string;
  code: number;
  error_subcode?: number;
  is_transient: boolean;
  error_user_title?: string;
  error_user_msg?: string;
  fbtrace_id: string;
}

/** A container's ERROR `status` names its subcode: "Error: ... (2207026)" or "... error code 2207082". */
export function subcodeFromContainerStatus(status: string | null | undefined): number | undefined {
  const match = /\b(220\d{4})\b/.exec(status ?? "");
  return match ? Number(match[1]) : undefined;
}

/** Graph's trace ids are short opaque strings; support tickets quote them. */
export function newFbtraceId(): string {
  return randomBytes(18).toString("base64url").slice(0, 23);
}

export interface GraphErrorInit {
  message: string;
  code: number;
  subcode?: number;
  type?: string;
  /** HTTP status; Graph uses 400 for nearly everything, 500 for its own failures. */
  status?: number;
  isTransient?: boolean;
  userTitle?: string;
  userMessage?: string;
  fbtraceId?: string;
}

/** Graph's error object as thrown; branded, since the web server may load this module twice (lib/brand.ts). */
export class GraphError extends brandedError("dispatch.graph-error") {
  readonly code: number;
  readonly subcode: number | undefined;
  readonly type: string;
  readonly status: number;
  readonly isTransient: boolean;
  readonly userTitle: string | undefined;
  readonly userMessage: string | undefined;
  readonly fbtraceId: string;
  /** The usage headers of the answer that carried it, set by the client: how long Graph says to back off. */
  usage: GraphUsage | undefined;

  constructor(init: GraphErrorInit) {
    super(init.message);
    this.name = "GraphError";
    this.code = init.code;
    this.subcode = init.subcode;
    this.type = init.type ?? "OAuthException";
    this.status = init.status ?? defaultHttpStatus(init.code);
    this.isTransient = init.isTransient ?? describeGraphError(init.code, init.subcode).transient;
    this.userTitle = init.userTitle;
    this.userMessage = init.userMessage;
    this.fbtraceId = init.fbtraceId ?? newFbtraceId();
  }

  get action(): GraphErrorAction {
    return classifyGraphError(this.code, this.subcode, this.isTransient).action;
  }

  get advice(): string {
    return classifyGraphError(this.code, this.subcode, this.isTransient).advice;
  }

  toBody(): { error: GraphErrorBody } {
    return {
      error: {
        message: this.message,
        type: this.type,
        code: this.code,
        ...(this.subcode !== undefined ? { error_subcode: this.subcode } : {}),
        is_transient: this.isTransient,
        ...(this.userTitle ? { error_user_title: this.userTitle } : {}),
        ...(this.userMessage ? { error_user_msg: this.userMessage } : {}),
        fbtrace_id: this.fbtraceId,
      },
    };
  }

  /**
   * Reads Graph's error object from a response body; undefined when the body is not one.
   * `fbtraceId` (e.g. the x-fb-trace-id header) stands in when the body carries none.
   */
  static fromResponse(body: unknown, status: number, fbtraceId?: string): GraphError | undefined {
    const parsed = graphErrorResponseSchema.safeParse(body);
    if (!parsed.success) return undefined;
    const e = parsed.data.error;
    return new GraphError({
      message: e.message,
      code: e.code,
      subcode: e.error_subcode ?? undefined,
      type: e.type,
      status,
      isTransient: e.is_transient ?? undefined,
      userTitle: e.error_user_title ?? undefined,
      userMessage: e.error_user_msg ?? undefined,
      fbtraceId: e.fbtrace_id ?? fbtraceId ?? "",
    });
  }
}

/** Lenient on purpose: the real interface omits fields and sends numbers as strings now and then. */
export const graphErrorResponseSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().default("OAuthException"),
    code: z.coerce.number().int(),
    error_subcode: z.coerce.number().int().nullish(),
    is_transient: z.boolean().nullish(),
    error_user_title: z.string().nullish(),
    error_user_msg: z.string().nullish(),
    fbtrace_id: z.string().nullish(),
  }),
});

/** Meta sends its error objects with HTTP 400 (every 2207xxx, -1 and -2 included); 500 is for its own unknown failures (1, 2). */
function defaultHttpStatus(code: number): number {
  return code === 1 || code === 2 ? 500 : 400;
}

/** A failure below Graph's error object: the network, a timeout, or an answer that is not Graph's (a proxy's 502 page). */
export class GraphTransportError extends brandedError("dispatch.graph-transport-error") {
  constructor(
    message: string,
    /** HTTP status, or null when no answer arrived. */
    readonly status: number | null,
    readonly isTransient: boolean,
    readonly fbtraceId: string | null = null,
  ) {
    super(message);
    this.name = "GraphTransportError";
  }
}

/**
 * A call that Dispatch held back before sending: Graph's usage headers said the app's or the
 * account's budget is used up (100 %, or an estimated_time_to_regain_access), so the call waits
 * until `until` rather than being refused (pacing.ts). Nothing reached Graph.
 */
export class GraphPaused extends brandedError("dispatch.graph-paused") {
  constructor(
    /** Milliseconds since the epoch. */
    readonly until: number,
    /** Whose budget: the app's (X-App-Usage) or the account's (X-Business-Use-Case-Usage). */
    readonly scope: "app" | "account",
  ) {
    super(
      `Graph's ${scope === "app" ? "app" : "account"} usage is at its limit; calls wait until ${new Date(until).toISOString()}`,
    );
    this.name = "GraphPaused";
  }
}

/** Every way a Graph call can fail that the publish flow decides about (anything else is a bug or an abort). */
export type GraphFailure = GraphError | GraphTransportError | GraphUploadError | GraphPaused;

export function isGraphFailure(error: unknown): error is GraphFailure {
  return (
    error instanceof GraphError ||
    error instanceof GraphTransportError ||
    error instanceof GraphUploadError ||
    error instanceof GraphPaused
  );
}

/** What the publish flow does about a failure, in GRAPH_ERRORS' words: the table for Graph's errors, the same vocabulary for the others. */
export function graphFailureAction(error: GraphFailure): GraphErrorAction {
  if (error instanceof GraphError || error instanceof GraphUploadError) return error.action;
  if (error instanceof GraphPaused) return "wait-rate-limit";
  return error.isTransient ? "retry" : "stop";
}

/**
 * Whether a failed Graph call may succeed if made again at once: what GRAPH_ERRORS says of its
 * code and subcode, or for a code the table does not know what Graph marked transient
 * (is_transient) — never the HTTP status, which Meta sets to 400 for nearly every error. An
 * upload's own failure says so itself (retriable).
 */
export function isTransientGraphFailure(error: unknown): boolean {
  if (error instanceof GraphTransportError) return error.isTransient;
  if (error instanceof GraphUploadError) return error.action === "retry";
  if (error instanceof GraphError) {
    const known = describeGraphError(error.code, error.subcode);
    // A code the table knows is decided by it (4/2207051 is never retried, -1/2207001 always is); another by is_transient.
    return known.meaning === UNKNOWN.meaning ? error.isTransient : known.transient;
  }
  return false;
}
