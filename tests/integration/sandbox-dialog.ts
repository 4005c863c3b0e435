import { expect } from "vitest";
import { sessionTenantOf } from "@/lib/web/auth";
import type { SessionStore } from "@/lib/web/sessions";

/**
 * The sandbox's login dialogs driven as a browser drives them: the page fetched with the
 * dashboard's session cookie, and its form sent back with what the page filled in (its hidden
 * fields, the boxes it ticked by default) and the person's choices, again with the cookie.
 */

/** What the sandbox's deps need to see Dispatch's sessions, as app/graph/sandbox-host.ts gives it. */
export const sessionReader = (sessions: Pick<SessionStore, "tenantFor">) => ({
  sessionTenant: sessionTenantOf(sessions),
});

/** The dialog's page, as the signed-in browser gets it. */
export async function openDialog(dialog: URL, cookie: string): Promise<string> {
  const page = await fetch(dialog, { headers: { cookie } });
  expect(page.status).toBe(200);
  return page.text();
}

/** The form's fields as the page filled them in: hidden inputs, and checkboxes and radios ticked by default. */
export function formOf(html: string): URLSearchParams {
  const form = new URLSearchParams();
  for (const [tag] of html.matchAll(/<input\b[^>]*>/g)) {
    const attribute = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
    const name = attribute("name");
    if (!name || /\sdisabled\b/.test(tag)) continue;
    const type = attribute("type") ?? "text";
    if ((type === "checkbox" || type === "radio") && !/\schecked\b/.test(tag)) continue;
    form.append(name, unescape(attribute("value") ?? ""));
  }
  return form;
}

/** Opens the dialog and sends its form back with these changes (a decision, picks, unticked boxes): the answer, not followed. */
export async function submitDialog(
  dialog: URL,
  cookie: string,
  change: (form: URLSearchParams, html: string) => void,
): Promise<Response> {
  const html = await openDialog(dialog, cookie);
  const form = formOf(html);
  change(form, html);
  return fetch(`${dialog.origin}${dialog.pathname}`, {
    method: "POST",
    headers: { cookie },
    body: form,
    redirect: "manual",
  });
}

/** lib/html.ts's escapeHtml undone: it writes every special character as a numeric reference. */
function unescape(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}
