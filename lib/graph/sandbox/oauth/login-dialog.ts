import { readBody } from "../../../web/http";
import type { SandboxDeps } from "../deps";
import { escapeHtml } from "../../../html";
import { claimAccounts, listAccountsFor } from "../account-claims";
import { allowedScopes, dialogTenant, permissionsHtml, SIGN_IN_FIRST, type LoginBrand } from "./dialog-access";
import { issueLoginCode } from "./login-codes";

/**
 * Instagram's authorize dialog, as a real page: `GET /oauth/authorize?client_id&redirect_uri&
 * response_type=code&scope&state` shows the accounts the signed-in tenant may log in as to pick
 * one, and the permissions asked for to untick the optional ones, with Allow and Cancel; the form
 * posts back here and the browser is sent to redirect_uri with `code` and `state`, or with
 * `error=access_denied` as Instagram sends a person who cancelled. Signed out of Dispatch, it
 * refuses (dialog-access.ts); an account the tenant may not hold is refused as an unknown one.
 */

export interface DialogRequest {
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string;
}

export async function answerLoginDialog(request: Request, deps: SandboxDeps): Promise<Response> {
  const method = request.method.toUpperCase();
  if (method === "GET" || method === "HEAD") {
    const query = new URL(request.url).searchParams;
    const dialog = dialogRequestOf(query);
    const refused = refusal(deps, dialog, query.get("response_type"));
    if (refused) return dialogError("Instagram", refused);
    const tenantId = await dialogTenant(deps, request);
    if (!tenantId) return signInFirst("Instagram");
    return dialogPage("Instagram", "Log in with Instagram", await consentForm(deps, dialog, tenantId));
  }
  if (method !== "POST") return dialogPage("Instagram", "Error", "<p>Method not allowed.</p>", 405);
  const form = await readDialogForm(request);
  const dialog = dialogRequestOf(form);
  const refused = refusal(deps, dialog, "code");
  if (refused) return dialogError("Instagram", refused);
  const tenantId = await dialogTenant(deps, request);
  if (!tenantId) return signInFirst("Instagram");
  // Instagram appends #_ to the redirect; clients must not take it for part of the code.
  if (form.get("decision") !== "allow")
    return redirectBack(
      dialog,
      { error: "access_denied", error_reason: "user_denied", error_description: "The user denied your request." },
      "#_",
    );
  const accountId = form.get("account_id") ?? "";
  // Another tenant's account reads as an unknown one: the page says nothing about who holds it.
  if (!(await claimAccounts(deps, tenantId, [accountId])))
    return dialogError("Instagram", "Pick an account to continue.");
  const code = await issueLoginCode(deps, {
    appId: dialog.clientId,
    redirectUri: dialog.redirectUri,
    accountId,
    scopes: allowedScopes("Instagram", dialog.scope, form),
  });
  return redirectBack(dialog, { code }, "#_");
}

export async function readDialogForm(request: Request): Promise<URLSearchParams> {
  return new URLSearchParams(new TextDecoder().decode(await readBody(request)));
}

/** Back to redirect_uri with the dialog's answer and its state, and the fragment Meta appends. */
export function redirectBack(
  dialog: Pick<DialogRequest, "redirectUri" | "state">,
  answer: Record<string, string>,
  fragment: string,
): Response {
  const back = new URL(dialog.redirectUri);
  for (const [name, value] of Object.entries(answer)) back.searchParams.set(name, value);
  if (dialog.state) back.searchParams.set("state", dialog.state);
  return new Response(null, {
    status: 302,
    headers: { location: `${back.toString()}${fragment}`, "cache-control": "no-store" },
  });
}

export function dialogRequestOf(params: URLSearchParams): DialogRequest {
  return {
    clientId: params.get("client_id") ?? "",
    redirectUri: params.get("redirect_uri") ?? "",
    scope: params.get("scope") ?? "",
    state: params.get("state") ?? "",
  };
}

/** Instagram's dialog refuses an unknown app or a redirect_uri the app did not register, before anyone logs in. */
function refusal(deps: SandboxDeps, dialog: DialogRequest, responseType: string | null): string | undefined {
  const login = deps.config.INSTAGRAM_LOGIN;
  if (!login.app || dialog.clientId !== login.app.id) return "Invalid platform app";
  if (dialog.redirectUri !== login.redirectUri)
    return "Invalid redirect_uri: it is not one of the app's valid OAuth redirect URIs.";
  if (responseType !== "code") return "Invalid response_type: only code is supported.";
  if (!dialog.scope.split(/[ ,]+/).includes("instagram_business_basic"))
    return "Invalid scope: instagram_business_basic is required.";
  return undefined;
}

async function consentForm(deps: SandboxDeps, dialog: DialogRequest, tenantId: string): Promise<string> {
  const accounts = await listAccountsFor(deps, tenantId);
  const choices = accounts
    .map(
      (a, i) =>
        `<label><input type="radio" name="account_id" value="${escapeHtml(a.accountId)}"${i === 0 ? " checked" : ""}> @${escapeHtml(a.username)}</label>`,
    )
    .join("\n");
  return `<p>The app <strong>${escapeHtml(dialog.clientId)}</strong> asks for the permissions below.</p>
${consentFormHtml("Instagram", dialog, "Log in as", choices)}`;
}

/** The form both dialogs show: the request carried in hidden fields, the choices, Allow and Cancel. */
export function consentFormHtml(who: LoginBrand, dialog: DialogRequest, legend: string, choices: string): string {
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  return `<form method="post" aria-label="${who} consent">
${hidden("client_id", dialog.clientId)}${hidden("redirect_uri", dialog.redirectUri)}${hidden("scope", dialog.scope)}${hidden("state", dialog.state)}
<fieldset><legend>${escapeHtml(legend)}</legend>
${choices || "<p>The sandbox has no accounts for you yet: make one through its control surface.</p>"}
</fieldset>
${permissionsHtml(who, dialog.scope)}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="cancel">Cancel</button>
</form>`;
}

export function dialogError(who: LoginBrand, message: string): Response {
  return dialogPage(who, "Error", `<p role="alert">${escapeHtml(message)}</p>`, 400);
}

/** Signed out of Dispatch: Meta would show its login page; the sandbox's people sign in at Dispatch. */
export function signInFirst(who: LoginBrand): Response {
  return dialogPage(who, "Sign in to Dispatch first", `<p role="alert">${escapeHtml(SIGN_IN_FIRST)}</p>`, 403);
}

/** A page of the sandbox's login dialogs, standing in for `who`'s. */
export function dialogPage(who: LoginBrand, title: string, body: string, status = 200): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${who} (Graph sandbox)</title></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
<p><small>The Dispatch Graph sandbox standing in for ${who}'s login.</small></p></main></body></html>`;
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}
