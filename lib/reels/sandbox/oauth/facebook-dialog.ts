import { escapeHtml } from "../../../html";
import type { SandboxDeps } from "../deps";
import { listSandboxPages, rememberPages, SANDBOX_FACEBOOK_USER } from "./facebook-pages";
import { issueLoginCode } from "./login-codes";
import {
  consentFormHtml,
  dialogError,
  dialogPage,
  dialogRequestOf,
  readDialogForm,
  redirectBack,
  type DialogRequest,
} from "./login-dialog";

/**
 * Facebook's OAuth dialog (Facebook Login for Business), as a real page: `GET /{version}/dialog/
 * oauth?client_id&redirect_uri&state&scope` shows the sandbox's Facebook user and its Pages, each
 * with its Instagram account, to tick the ones the app may see, with Allow and Cancel. The form
 * posts back here; the browser is sent to redirect_uri with `code` and `state`, or with
 * `error=access_denied` as Facebook sends a person who cancelled, and Facebook's `#_=_`.
 */

const FRAGMENT = "#_=_";

export async function answerFacebookDialog(request: Request, deps: SandboxDeps): Promise<Response> {
  const method = request.method.toUpperCase();
  if (method === "GET" || method === "HEAD") {
    const dialog = dialogRequestOf(new URL(request.url).searchParams);
    const refused = refusal(deps, dialog);
    if (refused) return dialogError("Facebook", refused);
    return dialogPage("Facebook", "Log in with Facebook", await consentForm(deps, dialog));
  }
  if (method !== "POST") return dialogPage("Facebook", "Error", "<p>Method not allowed.</p>", 405);
  const form = await readDialogForm(request);
  const dialog = dialogRequestOf(form);
  const refused = refusal(deps, dialog);
  if (refused) return dialogError("Facebook", refused);
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
  const offered = await listSandboxPages(deps);
  const allowed = offered.filter((page) => picked.has(page.pageId));
  if (allowed.length !== picked.size) return dialogError("Facebook", "Pick Pages from the list.");
  await rememberPages(deps, allowed);
  const code = await issueLoginCode(deps, {
    appId: dialog.clientId,
    redirectUri: dialog.redirectUri,
    accountId: SANDBOX_FACEBOOK_USER.id,
    pageIds: allowed.map((page) => page.pageId),
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

async function consentForm(deps: SandboxDeps, dialog: DialogRequest): Promise<string> {
  const pages = await listSandboxPages(deps);
  const choices = pages
    .map(
      (page) =>
        `<p><label><input type="checkbox" name="page_id" value="${escapeHtml(page.pageId)}"> ${escapeHtml(page.name)} · Instagram @${escapeHtml(page.account.username)}</label></p>`,
    )
    .join("\n");
  return `<p>Continue as <strong>${SANDBOX_FACEBOOK_USER.name}</strong>. The app <strong>${escapeHtml(dialog.clientId)}</strong> asks for: ${escapeHtml(dialog.scope)}.</p>
${consentFormHtml("Facebook", dialog, "Pages the app may use", choices)}`;
}
