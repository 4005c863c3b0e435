import { escapeHtml } from "../../../html";
import type { SandboxDeps } from "../deps";
import { claimAccounts } from "../account-claims";
import { allowedScopes, dialogTenant } from "./dialog-access";
import { listSandboxPages, rememberPages, SANDBOX_FACEBOOK_USER } from "./facebook-pages";
import { issueLoginCode } from "./login-codes";
import {
  consentFormHtml,
  dialogError,
  dialogPage,
  dialogRequestOf,
  readDialogForm,
  redirectBack,
  signInFirst,
  type DialogRequest,
} from "./login-dialog";

/**
 * Facebook's OAuth dialog (Facebook Login for Business), as a real page: `GET /{version}/dialog/
 * oauth?client_id&redirect_uri&state&scope` shows the sandbox's Facebook user and its Pages, each
 * with its Instagram account, to tick the ones the app may see, and the permissions asked for,
 * with Allow and Cancel. The form posts back here; the browser is sent to redirect_uri with `code`
 * and `state`, or with `error=access_denied` as Facebook sends a person who cancelled, and
 * Facebook's `#_=_`. As Instagram's dialog: only for a person signed in to Dispatch, and only the
 * Pages of accounts their tenant may hold (a Page stands for its account; dialog-access.ts).
 */

const FRAGMENT = "#_=_";

export async function answerFacebookDialog(request: Request, deps: SandboxDeps): Promise<Response> {
  const method = request.method.toUpperCase();
  if (method === "GET" || method === "HEAD") {
    const dialog = dialogRequestOf(new URL(request.url).searchParams);
    const refused = refusal(deps, dialog);
    if (refused) return dialogError("Facebook", refused);
    const tenantId = await dialogTenant(deps, request);
    if (!tenantId) return signInFirst("Facebook");
    return dialogPage("Facebook", "Log in with Facebook", await consentForm(deps, dialog, tenantId));
  }
  if (method !== "POST") return dialogPage("Facebook", "Error", "<p>Method not allowed.</p>", 405);
  const form = await readDialogForm(request);
  const dialog = dialogRequestOf(form);
  const refused = refusal(deps, dialog);
  if (refused) return dialogError("Facebook", refused);
  const tenantId = await dialogTenant(deps, request);
  if (!tenantId) return signInFirst("Facebook");
  if (form.get("decision") !== "allow")
    return redirectBack(
      dialog,
      {
        error: "access_denied",
        error_code: "200",
        error_description: "Permissions error",
        error_reason: "user_denied",
      },
      FRAGMENT,
    );
  const picked = new Set(form.getAll("page_id"));
  const offered = await listSandboxPages(deps, tenantId);
  const allowed = offered.filter((page) => picked.has(page.pageId));
  // A Page of another tenant's account is not on this tenant's list: refused as an unknown one.
  if (
    allowed.length !== picked.size ||
    !(await claimAccounts(
      deps,
      tenantId,
      allowed.map((page) => page.account.accountId),
    ))
  )
    return dialogError("Facebook", "Pick Pages from the list.");
  await rememberPages(deps, allowed);
  const code = await issueLoginCode(deps, {
    appId: dialog.clientId,
    redirectUri: dialog.redirectUri,
    accountId: SANDBOX_FACEBOOK_USER.id,
    pageIds: allowed.map((page) => page.pageId),
    scopes: allowedScopes("Facebook", dialog.scope, form),
  });
  return redirectBack(dialog, { code }, FRAGMENT);
}

/** Facebook's dialog refuses an unknown app or a redirect_uri the app did not register, before anyone logs in. */
function refusal(deps: SandboxDeps, dialog: DialogRequest): string | undefined {
  const login = deps.config.FACEBOOK_LOGIN;
  if (!login.app || dialog.clientId !== login.app.id)
    return "Invalid App ID: The provided app ID does not look like a valid app ID.";
  if (dialog.redirectUri !== login.redirectUri)
    return "URL Blocked: This redirect failed because the redirect URI is not whitelisted in the app's Client OAuth Settings.";
  return undefined;
}

async function consentForm(deps: SandboxDeps, dialog: DialogRequest, tenantId: string): Promise<string> {
  const pages = await listSandboxPages(deps, tenantId);
  const choices = pages
    .map(
      (page) =>
        `<p><label><input type="checkbox" name="page_id" value="${escapeHtml(page.pageId)}"> ${escapeHtml(page.name)} · Instagram @${escapeHtml(page.account.username)}</label></p>`,
    )
    .join("\n");
  return `<p>Continue as <strong>${SANDBOX_FACEBOOK_USER.name}</strong>. The app <strong>${escapeHtml(dialog.clientId)}</strong> asks for the permissions below.</p>
${consentFormHtml("Facebook", dialog, "Pages the app may use", choices)}`;
}
