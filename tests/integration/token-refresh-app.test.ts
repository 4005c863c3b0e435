import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountView } from "@/lib/accounts/account";
import { startTestStack, type TestStack } from "../stack";
import { waitFor } from "../helpers";

/**
 * The token refresh as a user's setup has it: `npm start`'s processes (the built web server and a
 * worker), the sandbox behind the app's own /graph routes, an account connected through the
 * dashboard's "Connect Instagram" with a browser's session, and then nobody acting. The bare-server
 * test (token-refresh.test.ts) could not see that the app's routes never served
 * /graph/refresh_access_token (it was Next's 404 page).
 */

const HOUR_S = 3600;
let stack: TestStack;
let cookie: string;

beforeAll(async () => {
  stack = await startTestStack("token-refresh-app", {
    // Due at once: the connected token lapses in an hour, well inside the default 10-day window.
    TOKEN_REFRESH_INTERVAL_MS: "300",
  });
  cookie = await signIn("acme");
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

async function signIn(tenant: string): Promise<string> {
  const response = await fetch(`${stack.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: stack.url },
    body: JSON.stringify({ api_key: stack.keys[tenant] }),
  });
  expect(response.status).toBe(200);
  return response.headers.get("set-cookie")!.split(";")[0]!;
}

async function control(pathname: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.url}/graph/_sandbox/${pathname}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

/** The form's fields as a browser would send them: hidden inputs, ticked boxes, and the account picked. */
function formFields(html: string, accountId: string): URLSearchParams {
  const form = /<form[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html)?.[1];
  if (!form) throw new Error(`no consent form in the dialog: ${html.slice(0, 500)}`);
  const fields = new URLSearchParams();
  for (const input of form.match(/<input\b[^>]*>/gi) ?? []) {
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`, "i").exec(input)?.[1];
    const name = attr("name");
    const value = (attr("value") ?? "").replace(/&amp;/g, "&").replace(/&quot;/g, '"');
    const type = (attr("type") ?? "text").toLowerCase();
    if (!name) continue;
    if (type === "hidden" || (type === "checkbox" && /\bchecked\b/i.test(input))) fields.append(name, value);
    if (type === "radio" && name === "account_id" && value === accountId) fields.set(name, value);
  }
  expect(fields.get("account_id"), "the dialog offers the account").toBe(accountId);
  fields.set("decision", "allow");
  return fields;
}

/** "Connect Instagram" as the dashboard's browser does it: the route, the sandbox's dialog, Allow, the callback. */
async function connectThroughDashboard(accountId: string): Promise<void> {
  const start = await fetch(`${stack.url}/api/accounts/connect/instagram`, {
    headers: { cookie },
    redirect: "manual",
  });
  expect(start.status).toBeGreaterThanOrEqual(300);
  const dialogUrl = new URL(start.headers.get("location")!, stack.url);
  const dialog = await fetch(dialogUrl, { headers: { cookie } });
  expect(dialog.status).toBe(200);
  const allowed = await fetch(new URL(dialogUrl.pathname, stack.url), {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: stack.url },
    body: formFields(await dialog.text(), accountId),
    redirect: "manual",
  });
  expect(allowed.status).toBe(302);
  const callback = await fetch(new URL(allowed.headers.get("location")!, stack.url), {
    headers: { cookie },
    redirect: "manual",
  });
  expect(callback.status).toBe(303);
  expect(callback.headers.get("location")).toContain(`connected=${accountId}`);
}

async function readAccount(accountId: string): Promise<AccountView | undefined> {
  const response = await stack.fetchAs("acme", "/api/accounts");
  expect(response.status).toBe(200);
  const { data } = (await response.json()) as { data: AccountView[] };
  return data.find((a) => a.account_id === accountId);
}

describe("token refresh through the running web server", () => {
  it("serves refresh_access_token under the app's /graph route, in Graph's shape", async () => {
    const response = await fetch(`${stack.url}/graph/refresh_access_token?grant_type=ig_refresh_token`);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as { error: { code: number } };
    expect(body.error.code).toBe(104);
  });

  it("moves a connected Instagram Login token's expiry later with nobody acting", async () => {
    const made = await control("accounts", { username: "refresh_through_app", token_expires_in: HOUR_S });
    const accountId = String(made.account_id);
    await connectThroughDashboard(accountId);
    const connected = (await readAccount(accountId))!;
    expect(connected.login).toBe("instagram");
    const firstExpiry = Date.parse(connected.token_expires_at!);
    expect(firstExpiry - Date.now()).toBeLessThanOrEqual(HOUR_S * 1000);

    const refreshed = await waitFor(
      async () => {
        const account = await readAccount(accountId);
        return account?.token_expires_at && Date.parse(account.token_expires_at) > firstExpiry ? account : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250, what: "the worker to refresh the token" },
    );
    // Meta's 60 days (less a little), not another hour.
    expect(Date.parse(refreshed.token_expires_at!) - Date.now()).toBeGreaterThan(59 * 86_400_000);
    expect(refreshed.status).toBe("connected");
    expect(refreshed.token_refresh).toBe("automatic");
    expect(stack.logs()).not.toMatch(/not JSON \(HTTP 404\)/);
  });

  it("marks the account needs_reconnect when the refresh is refused with 190", async () => {
    const made = await control("accounts", { username: "refused_through_app", token_expires_in: HOUR_S });
    const accountId = String(made.account_id);
    await control(`accounts/${accountId}/faults`, { on: "refresh", code: 190, error_subcode: 460, count: 1 });
    await connectThroughDashboard(accountId);
    const marked = await waitFor(
      async () => {
        const account = await readAccount(accountId);
        return account?.status === "needs_reconnect" ? account : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250, what: "the refused refresh to mark the account" },
    );
    expect(marked.error?.code).toBe(190);
    expect(marked.token_refresh).toBe("none");
  });
});
