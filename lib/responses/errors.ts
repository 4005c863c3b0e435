import { ZodError } from "zod";
import { ApiError, validationError, zodIssues, type ProblemCode } from "../errors";
import { json } from "../web/http";

/** OpenAI's error object: what its SDKs read to raise AuthenticationError, NotFoundError, RateLimitError… */
export interface OpenAIError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** OpenAI's type and code for each of Dispatch's problems; a body that does not match the schema is a 400 there, not a 422. */
const OPENAI_KIND: Record<ProblemCode, { status?: number; type: string; code: string | null }> = {
  "bad-request": { type: "invalid_request_error", code: null },
  "bad-json": { type: "invalid_request_error", code: null },
  validation: { status: 400, type: "invalid_request_error", code: null },
  "too-large": { type: "invalid_request_error", code: null },
  "unsupported-media-type": { type: "invalid_request_error", code: null },
  misdirected: { type: "invalid_request_error", code: null },
  unauthorized: { type: "invalid_request_error", code: "invalid_api_key" },
  forbidden: { type: "invalid_request_error", code: null },
  "not-found": { type: "invalid_request_error", code: null },
  "method-not-allowed": { type: "invalid_request_error", code: "method_not_allowed" },
  conflict: { type: "invalid_request_error", code: null },
  "rate-limited": { type: "requests", code: "rate_limit_exceeded" },
  unavailable: { type: "server_error", code: "service_unavailable" },
  internal: { type: "server_error", code: null },
};

/** `input.0.content` as OpenAI writes a parameter: `input[0].content`. */
export const openAIParam = (path: string) => path.replace(/\.(\d+)(?=\.|$)/g, "[$1]");

/** The status, headers and body of an error on the Responses surface; anything not an ApiError is a 500 that hides internals. */
export function toOpenAIError(error: unknown): {
  status: number;
  headers: Record<string, string>;
  body: { error: OpenAIError };
} {
  if (error instanceof ZodError) error = validationError(zodIssues(error));
  if (!(error instanceof ApiError)) {
    return {
      status: 500,
      headers: {},
      body: { error: { message: "Something went wrong on our side.", type: "server_error", param: null, code: null } },
    };
  }
  const kind = OPENAI_KIND[error.code];
  // OpenAI reports one parameter at a time: the first the schema named.
  const first = error.errors?.[0];
  const param = first && first.path !== "(body)" ? openAIParam(first.path) : null;
  const message = first ? (param ? `Invalid '${param}': ${first.message}` : first.message) : error.message;
  return {
    status: kind.status ?? error.status,
    headers: error.headers,
    body: { error: { message, type: kind.type, param, code: kind.code } },
  };
}

/** An ErrorAnswer (lib/http) for routes the OpenAI SDKs call. */
export function openAIErrorResponse(error: unknown, log?: (e: unknown) => void): Response {
  const { status, headers, body } = toOpenAIError(error);
  if (status >= 500 && !(error instanceof ApiError)) log?.(error);
  return json(body, status, headers);
}
