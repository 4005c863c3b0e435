import { GraphError } from "../../reels/graph-error";

/**
 * One call to Meta's login endpoints (Instagram's or Facebook's), shared by both logins' clients:
 * a timeout, no redirects, and Meta's error in either shape — Graph's `{error: {message}}` or
 * Instagram's `{error_message}` — as a MetaLoginError. Secrets and tokens never appear in an error.
 */

export class MetaLoginError extends Error {
  /** Meta's answer when it was a Graph error object, with its code (the token refresh reads 190 from it). */
  readonly graphError: GraphError | undefined;

  constructor(
    message: string,
    /** Meta's own words, when it answered with an error. */
    readonly metaMessage: string | null,
    options?: ErrorOptions & { graphError?: GraphError },
  ) {
    super(message, options);
    this.name = "MetaLoginError";
    this.graphError = options?.graphError;
  }
}

export interface LoginClientDeps {
  fetch: typeof fetch;
  version: string;
  timeoutMs?: number;
}

/** `who` names the service in the messages a person reads: "Instagram" or "Facebook". */
export async function callMeta(
  deps: LoginClientDeps,
  what: string,
  url: string,
  init: RequestInit,
  who = "Instagram",
): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await deps.fetch(url, {
      ...init,
      signal: AbortSignal.timeout(deps.timeoutMs ?? 10_000),
      redirect: "error",
    });
  } catch (error) {
    throw new MetaLoginError(`${who} could not be reached to ${what}.`, null, { cause: error });
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new MetaLoginError(
      `${who} answered "${what}" with something that is not JSON (HTTP ${response.status}).`,
      null,
    );
  }
  const record = isRecord(body) ? body : {};
  const metaMessage =
    isRecord(record.error) && typeof record.error.message === "string"
      ? record.error.message
      : typeof record.error_message === "string"
        ? record.error_message
        : null;
  if (!response.ok || metaMessage)
    throw new MetaLoginError(
      `${who} refused to ${what}${metaMessage ? `: ${metaMessage}` : ` (HTTP ${response.status})`}.`,
      metaMessage,
      { graphError: GraphError.fromResponse(record, response.status) },
    );
  return record;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
