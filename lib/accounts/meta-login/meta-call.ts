import { jsonField } from "../../hash-record";
import { GraphError } from "../../graph/error";
import { describeGraphError } from "../../graph/error-table";
import { reportToPacer, type GraphPacer } from "../../graph/pacing";
import { isRateLimitCode, readGraphUsage } from "../../graph/usage";

/**
 * One call to Meta's login endpoints (Instagram's or Facebook's), shared by both logins' clients
 * and the token refresh: a timeout, no redirects, and Meta's error in either shape — Graph's
 * `{error: {message}}` or Instagram's `{error_message}` — as a MetaLoginError. Every answer's usage
 * headers, and a refusal for a rate limit, are told to the Graph pacer, as publishing calls tell
 * it (lib/graph/pacing.ts). The pacer does not hold a login's calls back: a person is waiting with a
 * single-use code that lapses in minutes, and Meta's own refusal says when to try again. Secrets
 * and tokens never appear in an error.
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
  /** Told what each answer says of the app's and the account's Graph usage. */
  pacer: GraphPacer;
}

export interface MetaCaller {
  /** Names the service in the messages a person reads. */
  who?: "Instagram" | "Facebook";
  /** The account whose token the call carries, when it is a stored one (the token refresh); the pacer counts the call against it. */
  accountId?: string;
}

export async function callMeta(
  deps: LoginClientDeps,
  what: string,
  url: string,
  init: RequestInit,
  { who = "Instagram", accountId }: MetaCaller = {},
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
  const usage = readGraphUsage(response.headers);
  const body = jsonField(text);
  const record = isRecord(body) ? body : {};
  const graphError = GraphError.fromResponse(record, response.status);
  if (graphError) graphError.usage = usage;
  await reportToPacer(deps.pacer, accountId ?? null, usage, graphError);
  if (body === undefined)
    throw new MetaLoginError(
      `${who} answered "${what}" with something that is not JSON (HTTP ${response.status}).`,
      null,
    );
  const metaMessage =
    isRecord(record.error) && typeof record.error.message === "string"
      ? record.error.message
      : typeof record.error_message === "string"
        ? record.error_message
        : null;
  if (!response.ok || metaMessage)
    throw new MetaLoginError(
      `${who} refused to ${what}${metaMessage ? `: ${metaMessage}` : ` (HTTP ${response.status})`}.${rateLimitNote(who, graphError)}`,
      metaMessage,
      { graphError },
    );
  return record;
}

/** For a refusal for a rate limit, what kind and how long Meta says to wait, so the person knows to try later. */
function rateLimitNote(who: string, graphError: GraphError | undefined): string {
  if (!graphError || !isRateLimitCode(graphError.code, graphError.subcode)) return "";
  const minutes = Math.ceil((graphError.usage?.regainAccessMs ?? 0) / 60_000);
  const when = minutes > 0 ? `in about ${minutes} minute${minutes === 1 ? "" : "s"}` : "in a few minutes";
  return ` ${who} is rate limiting Dispatch's calls (${describeGraphError(graphError.code, graphError.subcode).meaning}): try again ${when}.`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
