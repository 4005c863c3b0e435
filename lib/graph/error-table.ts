import { CONTENT_PUBLISHING_ERRORS } from "./content-publishing-errors";

/** Graph's error codes, and what a client should do about each: the table and its look-ups. */

export type { GraphErrorAction, GraphErrorInfo } from "./error-info";
import type { GraphErrorAction, GraphErrorInfo } from "./error-info";

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
  ...CONTENT_PUBLISHING_ERRORS,
];

export const UNKNOWN: Omit<GraphErrorInfo, "code" | "subcode"> = {
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
