import { escapeHtml } from "../../../html";
import type { SandboxDeps } from "../deps";

/**
 * Who may use the sandbox's login dialogs, and what they allow there. The dialogs serve a person
 * signed in to Dispatch (the sandbox is Dispatch's, and Meta's dialogs too need a logged-in
 * person); each asked-for permission is a checkbox, ticked by default, the required ones fixed,
 * and the code records the ones left ticked, as Meta's dialogs let a person decline permissions.
 */

export type LoginBrand = "Instagram" | "Facebook";

/** Meta's dialogs do not let a person decline these: the login is pointless without them. */
const REQUIRED: Record<LoginBrand, readonly string[]> = {
  Instagram: ["instagram_business_basic"],
  Facebook: ["instagram_basic", "pages_show_list"],
};

/** The tenant signed in to Dispatch on this browser; undefined when none (or no session reader). */
export async function dialogTenant(deps: SandboxDeps, request: Request): Promise<string | undefined> {
  return deps.sessionTenant ? deps.sessionTenant(request) : undefined;
}

export const SIGN_IN_FIRST =
  "Sign in to Dispatch first: this login dialog serves the dashboard session that started the connection.";

/** `scope` as the app sent it, comma- or space-separated, each once. */
export function requestedScopes(scope: string): string[] {
  return [...new Set(scope.split(/[ ,]+/).filter(Boolean))];
}

/** One checkbox per permission asked for: ticked, and fixed when required. */
export function permissionsHtml(brand: LoginBrand, scope: string): string {
  const items = requestedScopes(scope).map((name) => {
    const required = REQUIRED[brand].includes(name);
    // A disabled checkbox is not sent: the required ones are allowed whatever the form says.
    const input = required
      ? `<input type="checkbox" checked disabled>`
      : `<input type="checkbox" name="permission" value="${escapeHtml(name)}" checked>`;
    return `<p><label>${input} ${escapeHtml(name)}${required ? " (required)" : ""}</label></p>`;
  });
  return `<fieldset><legend>Permissions the app may use</legend>\n${items.join("\n")}\n</fieldset>`;
}

/** The permissions allowed: the required ones and the ticked ones, of those asked for; never more. */
export function allowedScopes(brand: LoginBrand, scope: string, form: URLSearchParams): string[] {
  const ticked = new Set(form.getAll("permission"));
  return requestedScopes(scope).filter((name) => REQUIRED[brand].includes(name) || ticked.has(name));
}
