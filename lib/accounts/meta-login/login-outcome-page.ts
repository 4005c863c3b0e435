import { ApiError } from "../../errors";
import { escapeHtml } from "../../html";
import { problemResponse, type ErrorAnswer } from "../../web/http";
import { FACEBOOK_CHOICE_PATH } from "./connect-with-facebook";
import type { AccountChoiceOption, LoginOutcome } from "./login-callback";

const ACCOUNTS_PATH = "/dashboard/accounts";

/**
 * Where a browser lands after Meta's login: the Accounts page when connected, the picker when a
 * Facebook login found several accounts, else a page that says what happened.
 */
export function loginOutcomeResponse(outcome: LoginOutcome, accountsPath = ACCOUNTS_PATH): Response {
  if (outcome.kind === "connected") {
    // A fragment of our own: without one the browser keeps Instagram's #_ across the redirect.
    const id = encodeURIComponent(outcome.accountId);
    return new Response(null, {
      status: 303,
      headers: { location: `${accountsPath}?connected=${id}#account-${id}`, "cache-control": "no-store" },
    });
  }
  if (outcome.kind === "choose") return htmlPage("Choose the accounts to connect", pickerBody(outcome), 200);
  return htmlPage(
    outcome.title,
    `<p data-testid="login-outcome">${escapeHtml(outcome.detail)}</p>
<p><a href="${escapeHtml(accountsPath)}">Back to Accounts</a></p>`,
  );
}

/** The picker: the offered accounts as checkboxes and the choice's id; never a token. */
function pickerBody(outcome: { choiceId: string; options: AccountChoiceOption[] }): string {
  const boxes = outcome.options
    .map(
      (option) =>
        `<p><label><input type="checkbox" name="account_id" value="${escapeHtml(option.accountId)}"> ${escapeHtml(option.username ? `@${option.username}` : option.accountId)}</label> <small>(Page: ${escapeHtml(option.pageName)})</small></p>`,
    )
    .join("\n");
  return `<p>Your Facebook Pages are linked to ${outcome.options.length} Instagram accounts. Dispatch connects the ones you tick.</p>
<form method="post" action="${FACEBOOK_CHOICE_PATH}" aria-label="Accounts to connect">
<input type="hidden" name="choice" value="${escapeHtml(outcome.choiceId)}">
<fieldset><legend>Instagram accounts</legend>
${boxes}
</fieldset>
<p><button type="submit">Connect the accounts ticked</button></p>
</form>
<p><a href="${ACCOUNTS_PATH}">Cancel: back to Accounts</a></p>`;
}

/**
 * How a login's routes answer an error: a browser back from Meta whose dashboard session ended
 * meanwhile gets a page that says to sign in again (nothing was stored); the rest as problem+json.
 */
export const loginErrorAnswer: ErrorAnswer = (error, log) => {
  if (!(error instanceof ApiError) || error.code !== "unauthorized") return problemResponse(error, log);
  const signIn = `/sign-in?next=${encodeURIComponent(ACCOUNTS_PATH)}`;
  return htmlPage(
    "Sign in again",
    `<p data-testid="login-outcome">You are not signed in to Dispatch in this browser (the session may have ended while you were away), so nothing was connected. Sign in again, then connect the account from the Accounts page.</p>
<p><a href="${escapeHtml(signIn)}">Sign in again</a></p>`,
    401,
  );
};

function htmlPage(title: string, body: string, status = 400): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Dispatch</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}</main></body></html>`;
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}
