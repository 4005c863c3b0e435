import { ZodError } from "zod";
import { brandedError } from "./brand";

/**
 * Dispatch's one error shape, RFC 9457 problem+json. Graph's own error object lives in lib/reels/,
 * because the sandbox must answer exactly like the real interface.
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

export type ProblemCode =
  | "bad-request"
  | "bad-json"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "method-not-allowed"
  | "conflict"
  | "too-large"
  | "unsupported-media-type"
  | "misdirected"
  | "validation"
  | "rate-limited"
  | "unavailable"
  | "internal";

const STATUS: Record<ProblemCode, number> = {
  "bad-request": 400,
  "bad-json": 400,
  unauthorized: 401,
  forbidden: 403,
  "not-found": 404,
  "method-not-allowed": 405,
  conflict: 409,
  "too-large": 413,
  "unsupported-media-type": 415,
  misdirected: 421,
  validation: 422,
  "rate-limited": 429,
  unavailable: 503,
  internal: 500,
};

/** An error the API answers with as it is; anything else becomes a 500 that hides internals. */
export class ApiError extends brandedError("dispatch.api-error") {
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    detail: string,
    readonly errors?: { path: string; message: string }[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = STATUS[code];
  }
}

/** Seconds a client should wait before trying again when the broker is away. */
export const BROKER_RETRY_AFTER_S = 2;

/** A 422: the request's shape is wrong; `errors` says where and how, in words a person can act on. */
export function validationError(errors: { path: string; message: string }[]): ApiError {
  return new ApiError("validation", "The request does not match the schema.", errors);
}

/** A 503 for a submission the broker did not acknowledge: nothing was accepted, the client retries. */
export function brokerUnavailable(detail: string): ApiError {
  return new ApiError("unavailable", detail, undefined, { "Retry-After": String(BROKER_RETRY_AFTER_S) });
}

export function zodIssues(error: ZodError): { path: string; message: string }[] {
  return error.issues.flatMap((issue) => {
    const at = issue.path.map(String);
    // An unknown field is reported at its own path, so a form can show it next to the field.
    if (issue.code === "unrecognized_keys")
      return issue.keys.map((key) => ({ path: [...at, key].join("."), message: `${key} is not a known field` }));
    return [{ path: at.join(".") || "(body)", message: issue.message }];
  });
}

export function toProblem(error: unknown): { problem: Problem; headers: Record<string, string> } {
  if (error instanceof ZodError) error = validationError(zodIssues(error));
  if (error instanceof ApiError) {
    const problem: Problem = {
      type: `/problems/${error.code}`,
      title: TITLES[error.status] ?? "Error",
      status: error.status,
      detail: error.message,
    };
    if (error.errors) problem.errors = error.errors;
    return { problem, headers: error.headers };
  }
  return {
    problem: {
      type: "/problems/internal",
      title: TITLES[500],
      status: 500,
      detail: "Something went wrong on our side.",
    },
    headers: {},
  };
}
