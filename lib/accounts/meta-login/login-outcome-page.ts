import { escapeHtml } from "../../html";
import type { LoginOutcome } from "./connect-with-instagram";

/** Where a browser lands after Meta's login: the Accounts page when connected, else a page that says what happened. */
export function loginOutcomeResponse(outcome: LoginOutcome, accountsPath = "/dashboard/accounts"): Response {
  if (outcome.kind === "connected") {
    // A fragment of our own: without one the browser keeps Instagram's #_ across the redirect.
    const id = encodeURIComponent(outcome.accountId);
    return new Response(null, {
      status: 303,
      headers: { location: `${accountsPath}?connected=${id}#account-${id}`, "cache-control": "no-store" },
    });
  }
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(outcome.title)} · Dispatch</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><main><h1>${escapeHtml(outcome.title)}</h1>
<p data-testid="login-outcome">${escapeHtml(outcome.detail)}</p>
<p><a href="${escapeHtml(accountsPath)}">Back to Accounts</a></p></main></body></html>`;
  return new Response(html, {
    status: 400,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}
