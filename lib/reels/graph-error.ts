import { randomBytes } from "node:crypto";
import { z } from "zod";
import { brandedError } from "../brand";
import type { GraphUsage } from "./graph-usage";

/**
 * Graph's error object, and what a client should do about each code. The sandbox answers with
 * these; the publish flow reads them back from the real interface or the sandbox alike.
 */

/**
 * What the publish flow does about an error, and the classification a client reads: `wait-quota`
 * waits for the publishing window to free a slot, `wait-rate-limit` backs off, `reconnect-account`
 * waits for a new token, `not-ready` polls the container again.
 */
export type GraphErrorAction =
  | "retry"
  | "new-container"
  | "fix-input"
  | "reconnect-account"
  | "wait-quota"
  | "wait-rate-limit"
  | "not-ready"
  | "stop";

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

export interface GraphErrorInfo {
  code: number;
  /** Absent: the entry covers the code with any subcode not listed separately. */
  subcode?: number;
  meaning: string;
  /** One sentence in plain words for the person who asked to publish. */
  headline: string;
  action: GraphErrorAction;
  advice: string;
  transient: boolean;
}

/** From graph-reference.md (Meta's error-code reference for content publishing). */
export const GRAPH_ERRORS: readonly GraphErrorInfo[] = [
  {
    code: 1,
    meaning: "temporary error",
    headline: "Graph had a temporary error.",
    action: "retry",
    advice: "A temporary Graph error; retry with backoff.",
    transient: true,
  },
  {
    code: 2,
    meaning: "service error",
    headline: "Graph was temporarily unavailable.",
    action: "retry",
    advice: "Graph is temporarily unavailable; retry with backoff.",
    transient: true,
  },
  {
    code: 4,
    subcode: 2207051,
    meaning: "publishing restricted as suspected spam or abuse",
    headline: "Instagram restricted the account's publishing as suspected spam or abuse.",
    action: "stop",
    advice:
      "Not a rate limit: do not try again. The account's owner should check the Instagram app and tell Instagram if the restriction is a mistake.",
    transient: false,
  },
  {
    code: 4,
    meaning: "application rate limit",
    headline: "The app made too many calls to Graph.",
    action: "wait-rate-limit",
    advice: "The app made too many calls; back off before calling again.",
    transient: true,
  },
  {
    code: 17,
    meaning: "user rate limit",
    headline: "The account made too many calls to Graph.",
    action: "wait-rate-limit",
    advice: "The account made too many calls; back off before calling again.",
    transient: true,
  },
  {
    code: 32,
    meaning: "page rate limit",
    headline: "The page made too many calls to Graph.",
    action: "wait-rate-limit",
    advice: "The page made too many calls; back off before calling again.",
    transient: true,
  },
  {
    code: 613,
    meaning: "custom rate limit",
    headline: "A Graph rate limit was reached.",
    action: "wait-rate-limit",
    advice: "A rate limit was reached; back off before calling again.",
    transient: true,
  },
  {
    code: 80002,
    meaning: "Instagram rate limit",
    headline: "Instagram's rate limit was reached.",
    action: "wait-rate-limit",
    advice: "Instagram's rate limit was reached; back off before calling again.",
    transient: true,
  },
  {
    code: 10,
    meaning: "permission missing",
    headline: "The access token lacks a permission needed to publish.",
    action: "reconnect-account",
    advice: "The token lacks a permission; reconnect the account with the publishing scopes.",
    transient: false,
  },
  {
    code: 100,
    subcode: 33,
    meaning: "object not found or not visible to the token",
    headline: "Graph has no such object, or the account's token cannot see it.",
    action: "fix-input",
    advice:
      "The id does not exist, belongs to another account, or does not support this call; check the id and the account it belongs to.",
    transient: false,
  },
  {
    code: 100,
    meaning: "invalid parameter",
    headline: "Graph refused a parameter of the request.",
    action: "fix-input",
    advice: "A parameter is missing or invalid; fix the request.",
    transient: false,
  },
  {
    code: 104,
    meaning: "access token missing",
    headline: "The call to Graph carried no access token.",
    action: "reconnect-account",
    advice: "No access token was sent; connect the account (again) so it has one.",
    transient: false,
  },
  {
    code: 190,
    meaning: "access token invalid or expired",
    headline: "The account's access token is invalid, expired or revoked.",
    action: "reconnect-account",
    advice: "The access token is invalid, expired or revoked; reconnect the account.",
    transient: false,
  },
  {
    code: 368,
    meaning: "blocked for policy",
    headline: "Instagram blocked the action as a policy violation.",
    action: "stop",
    advice: "The action was blocked as a policy violation; do not retry.",
    transient: false,
  },
  {
    code: 2500,
    meaning: "unknown path",
    headline: "The Graph path or API version does not exist.",
    action: "fix-input",
    advice: "The path or API version does not exist; fix the request.",
    transient: false,
  },
  {
    code: -1,
    subcode: 2207001,
    meaning: "server error",
    headline: "Instagram had a server error.",
    action: "retry",
    advice: "Instagram had a server error; retry.",
    transient: true,
  },
  {
    code: -1,
    subcode: 2207032,
    meaning: "could not create the container",
    headline: "Instagram could not create the container.",
    action: "retry",
    advice: "The container could not be created; retry.",
    transient: true,
  },
  {
    code: -1,
    subcode: 2207053,
    meaning: "unknown upload error",
    headline: "The upload failed for a reason Instagram did not give.",
    action: "new-container",
    advice: "The upload failed; create a new container.",
    transient: false,
  },
  {
    code: -1,
    meaning: "server error",
    headline: "Instagram had a server error.",
    action: "retry",
    advice: "Instagram had a server error; retry.",
    transient: true,
  },
  {
    code: -2,
    subcode: 2207003,
    meaning: "timed out downloading the media",
    headline: "Instagram timed out downloading the video.",
    action: "retry",
    advice: "Downloading the video timed out; retry, or serve it from a faster host.",
    transient: true,
  },
  {
    code: -2,
    subcode: 2207020,
    meaning: "media expired",
    headline: "The container expired: it was not published within 24 hours of its creation.",
    action: "new-container",
    advice: "The container expired; create a new one.",
    transient: false,
  },
  {
    code: -2,
    meaning: "media error",
    headline: "Instagram had a temporary media error.",
    action: "retry",
    advice: "A temporary media error; retry.",
    transient: true,
  },
  {
    code: 9,
    subcode: 2207042,
    meaning: "daily publishing limit reached",
    headline: "The account reached its publishing limit for the last 24 hours.",
    action: "wait-quota",
    advice: "The account reached its publishing limit for the moving 24 hours; wait for the window.",
    transient: false,
  },
  {
    code: 9,
    meaning: "limit reached",
    headline: "A Graph limit was reached.",
    action: "wait-quota",
    advice: "A limit was reached; wait for the window.",
    transient: false,
  },
  {
    code: 24,
    subcode: 2207006,
    meaning: "media not found",
    headline: "Instagram could not find the container.",
    action: "new-container",
    advice: "The container was not found; create a new one.",
    transient: false,
  },
  {
    code: 24,
    subcode: 2207008,
    meaning: "temporary publish error",
    headline: "Instagram had a temporary error while publishing.",
    action: "retry",
    advice: "Retry once or twice within 30 s to 2 min, then create a new container.",
    transient: true,
  },
  {
    code: 25,
    subcode: 2207050,
    meaning: "account restricted",
    headline: "The Instagram account is restricted.",
    action: "stop",
    advice: "The account is restricted; its owner must act in the Instagram app.",
    transient: false,
  },
  {
    code: 352,
    subcode: 2207026,
    meaning: "unsupported video format",
    headline: "The video's format is not supported for reels.",
    action: "fix-input",
    advice: "The video does not meet the reel specification; fix the video.",
    transient: false,
  },
  {
    code: 9004,
    subcode: 2207052,
    meaning: "media could not be fetched from the URL",
    headline: "Instagram could not fetch the video from its URL.",
    action: "fix-input",
    advice: "Make the video URL public and valid (no login wall, no redirect to a page).",
    transient: false,
  },
  {
    code: 9007,
    subcode: 2207027,
    meaning: "media not ready for publishing",
    headline: "The video was not ready to publish yet.",
    action: "not-ready",
    advice: "Wait until the container is FINISHED, then publish.",
    transient: false,
  },
  {
    code: 9007,
    meaning: "media not ready for publishing",
    headline: "The video was not ready to publish yet.",
    action: "not-ready",
    advice: "Wait until the container is FINISHED, then publish.",
    transient: false,
  },
];

const UNKNOWN: Omit<GraphErrorInfo, "code" | "subcode"> = {
  meaning: "unknown error",
  headline: "Graph answered with an error Dispatch does not know.",
  action: "stop",
  advice: "An error this client does not know; read the message.",
  transient: false,
};

/** The table entry for a code and subcode: exact pair first, then the code alone. */
export function describeGraphError(code: number, subcode?: number | null): GraphErrorInfo {
  const exact = GRAPH_ERRORS.find((e) => e.code === code && e.subcode !== undefined && e.subcode === subcode);
  if (exact) return exact;
  const general = GRAPH_ERRORS.find((e) => e.code === code && e.subcode === undefined);
  if (general) return general;
  // Subcodes are unique across codes, so a known subcode under an unexpected code still says what happened.
  const bySubcode = subcode ? GRAPH_ERRORS.find((e) => e.subcode === subcode) : undefined;
  if (bySubcode) return { ...bySubcode, code };
  // 200–299 are permission errors like 10.
  const permission = code >= 200 && code <= 299 ? GRAPH_ERRORS.find((e) => e.code === 10) : undefined;
  if (permission) return { ...permission, code };
  return { code, subcode: subcode ?? undefined, ...UNKNOWN };
}

/** What a Graph error means in plain words and what to do about it. An unknown code that Graph marked transient is retried. */
export function classifyGraphError(
  code: number,
  subcode?: number | null,
  isTransient?: boolean,
): { action: GraphErrorAction; advice: string; headline: string } {
  const info = describeGraphError(code, subcode);
  if (info.meaning === UNKNOWN.meaning && isTransient)
    return {
      action: "retry",
      advice: "Graph marked this error transient; retry with backoff.",
      headline: info.headline,
    };
  return { action: info.action, advice: info.advice, headline: info.headline };
}

/** The table entry for a subcode alone, e.g. the one in a container's ERROR status. */
export function graphErrorForSubcode(subcode: number): GraphErrorInfo | undefined {
  return GRAPH_ERRORS.find((e) => e.subcode === subcode);
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
 * The resumable upload endpoint's own failure (rupload): not a Graph error object but
 * `{"debug_info": {"retriable", "type", "message"}}`. `retriable` says whether sending the bytes
 * again can work; a refused token (an authorization type, or HTTP 401/403) needs the account
 * reconnected; anything else leaves the container unusable, so a new one is the way on.
 */
export class GraphUploadError extends brandedError("dispatch.graph-upload-error") {
  constructor(
    message: string,
    /** debug_info.type, e.g. ProcessingFailedError. */
    readonly type: string,
    readonly retriable: boolean,
    /** HTTP status of the answer. */
    readonly status: number,
    readonly fbtraceId: string | null = null,
  ) {
    super(message);
    this.name = "GraphUploadError";
  }

  /** The upload was refused for its token: an authorization or token type, or HTTP 401/403. */
  get tokenRefused(): boolean {
    return this.status === 401 || this.status === 403 || /auth|token|session/i.test(this.type);
  }

  get action(): GraphErrorAction {
    if (this.tokenRefused) return "reconnect-account";
    return this.retriable ? "retry" : "new-container";
  }

  /** Reads `{debug_info}` from an upload answer; undefined when the body is not one. */
  static fromResponse(body: unknown, status: number, fbtraceId: string | null): GraphUploadError | undefined {
    const parsed = uploadErrorSchema.safeParse(body);
    if (!parsed.success) return undefined;
    const info = parsed.data.debug_info;
    return new GraphUploadError(
      info.message || `upload failed (${info.type})`,
      info.type,
      info.retriable,
      status,
      fbtraceId,
    );
  }
}

const uploadErrorSchema = z.object({
  debug_info: z.object({
    retriable: z.boolean().catch(false),
    type: z.string().catch("UnknownError"),
    message: z.string().catch(""),
  }),
});

/**
 * A call that Dispatch held back before sending: Graph's usage headers said the app's or the
 * account's budget is used up (100 %, or an estimated_time_to_regain_access), so the call waits
 * until `until` rather than being refused (graph-pacing.ts). Nothing reached Graph.
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
