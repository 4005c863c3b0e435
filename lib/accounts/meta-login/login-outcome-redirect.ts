import { ApiError } from "../../errors";
import type { Redis } from "../../redis";
import { problemResponse, type ErrorAnswer } from "../../web/http";
import { nothingConnected, type LoginCaller, type LoginOutcome, type LoginRefusal } from "./login-callback";
import { readSessionBound, saveSessionBound } from "./session-bound-record";

/**
 * Where a browser goes after Meta's login, always a dashboard page: the Accounts page when
 * connected, the picker when a Facebook login found several accounts, else the page that says
 * why. The addresses carry a random id (or the one fixed code `signed-out`), never a token or
 * Meta's words: a refusal's message waits server-side, bound to the session, so no link made
 * elsewhere can put text on a Dispatch page.
 */

const ACCOUNTS_PATH = "/dashboard/accounts";
export const LOGIN_OUTCOME_PATH = "/dashboard/accounts/connect";
const ACCOUNT_CHOICE_PAGE_PATH = "/dashboard/accounts/connect/choose";
/** The outcome page of a browser back from Meta signed out: signing in leads there. */
export const SIGNED_OUT_OUTCOME_PATH = `${LOGIN_OUTCOME_PATH}?outcome=signed-out`;

/** How long a refusal's page can be shown (or reloaded) after the callback. */
const OUTCOME_KEPT_S = 3600;
const outcomeKey = (id: string) => `meta-login:outcome:${id}`;

type StoredRefusal = Pick<LoginRefusal, "title" | "detail">;

export async function loginOutcomeRedirect(
  redis: Redis,
  caller: LoginCaller,
  outcome: LoginOutcome,
): Promise<Response> {
  // Each address has a fragment of its own: without one the browser keeps Meta's #_ (or #_=_) across the redirect.
  if (outcome.kind === "connected") {
    const id = encodeURIComponent(outcome.accountId);
    return seeOther(`${ACCOUNTS_PATH}?connected=${id}#account-${id}`);
  }
  if (outcome.kind === "choose")
    return seeOther(`${ACCOUNT_CHOICE_PAGE_PATH}?choice=${outcome.choiceId}#account-choice`);
  const stored: StoredRefusal = { title: outcome.title, detail: outcome.detail };
  const id = await saveSessionBound(redis, outcomeKey, caller, stored, OUTCOME_KEPT_S);
  return seeOther(`${LOGIN_OUTCOME_PATH}?outcome=${id}#login-outcome`);
}

const SIGNED_OUT = nothingConnected(
  "You were not signed in to Dispatch when you came back from Meta (the session may have ended while you were away), so nothing was connected. Connect the account again from the Accounts page.",
);
const GONE: LoginRefusal = {
  kind: "refused",
  title: "Nothing to show",
  detail:
    "This message has expired or belongs to another session. The Accounts page shows which accounts are connected.",
};

/** The outcome page's message: the refusal the callback kept for this session, or why there is none. */
export async function readLoginOutcome(
  redis: Redis,
  outcome: unknown,
  caller: LoginCaller | undefined,
): Promise<LoginRefusal> {
  if (outcome === "signed-out") return SIGNED_OUT;
  if (typeof outcome !== "string" || !caller) return GONE;
  const read = await readSessionBound<StoredRefusal>(redis, outcomeKey, outcome, caller);
  return read.ok ? { kind: "refused", title: read.value.title, detail: read.value.detail } : GONE;
}

/**
 * How a login's routes answer an error: a browser back from Meta whose dashboard session ended
 * meanwhile goes to sign in, and from there to the page that says nothing was connected (nothing
 * was stored, and the state was not taken); the rest as problem+json.
 */
export const loginErrorAnswer: ErrorAnswer = (error, log) => {
  if (!(error instanceof ApiError) || error.code !== "unauthorized") return problemResponse(error, log);
  return seeOther(`/sign-in?next=${encodeURIComponent(SIGNED_OUT_OUTCOME_PATH)}`);
};

function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
}
