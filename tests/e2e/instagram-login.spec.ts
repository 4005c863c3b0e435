import type { Page } from "@playwright/test";
import { expect, sandboxAccount, screenshot, signIn, test } from "./fixtures";
import { LOGIN_STATE_TTL_S } from "./stack-file";

/**
 * Instagram Login through the sandbox's dialog, in the browser: the Accounts page's button, the
 * dialog's Allow and Cancel, and the callback's refusals of a replayed and an expired state.
 */

/** From the Accounts page to the sandbox's dialog, as a person gets there. */
async function openDialog(page: Page): Promise<void> {
  await page.goto("/dashboard/accounts");
  await page.getByRole("link", { name: "Connect Instagram" }).click();
  await expect(page.getByRole("heading", { name: "Log in with Instagram" })).toBeVisible();
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("Allow at the dialog connects the account: username and token expiry shown; the same callback again connects nothing", async ({
  page,
}) => {
  const username = `e2e_login_${Date.now()}`;
  const accountId = await sandboxAccount(page, username);
  const callbacks: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/api/accounts/connect/instagram/callback?")) callbacks.push(request.url());
  });
  await openDialog(page);
  await page.getByRole("radio", { name: `@${username}` }).check();
  await page.getByRole("button", { name: "Allow" }).click();

  await expect(page).toHaveURL(new RegExp(`/dashboard/accounts\\?connected=${accountId}#account-${accountId}$`));
  const card = page.locator(`[data-testid="account"][data-account-id="${accountId}"]`);
  await expect(card).toContainText(`@${username}`);
  await expect(card.getByTestId("account-status")).toHaveText("Connected");
  await expect(card.getByTestId("token-expiry")).toContainText("Connected with Instagram · token expires");
  const expires = Date.parse((await card.getByTestId("token-expiry").locator("time").getAttribute("datetime"))!);
  expect(expires - Date.now()).toBeGreaterThan(59 * 86_400_000);
  await screenshot(page, "accounts-instagram-login");

  expect(callbacks).toHaveLength(1);
  await page.goto(callbacks[0]!);
  await expect(page).toHaveURL(/\/dashboard\/accounts\/connect\?outcome=[A-Za-z0-9_-]{32}#login-outcome$/);
  await expect(page.getByTestId("login-outcome")).toContainText("already used");
});

test("Cancel at the dialog: 'You cancelled at Instagram', nothing connected", async ({ page }) => {
  const before = ((await (await page.request.get("/api/accounts")).json()) as { data: unknown[] }).data.length;
  await openDialog(page);
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("heading", { name: "You cancelled at Instagram" })).toBeVisible();
  await page.getByRole("link", { name: "Back to Accounts" }).click();
  await expect(page.getByRole("link", { name: "Connect Instagram" })).toBeVisible();
  expect(((await (await page.request.get("/api/accounts")).json()) as { data: unknown[] }).data).toHaveLength(before);
});

test("a state older than its time: the callback refuses it and nothing is connected", async ({ page }) => {
  const username = `e2e_login_late_${Date.now()}`;
  const accountId = await sandboxAccount(page, username);
  await openDialog(page);
  // The state was made before the dialog showed, so its life ends before this deadline: nothing to poll but the clock.
  const shown = Date.now();
  await page.waitForTimeout(Math.max(0, shown + (LOGIN_STATE_TTL_S + 1) * 1000 - Date.now()));
  await page.getByRole("radio", { name: `@${username}` }).check();
  await page.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByTestId("login-outcome")).toContainText("took too long");
  const accounts = ((await (await page.request.get("/api/accounts")).json()) as { data: { account_id: string }[] })
    .data;
  expect(accounts.some((a) => a.account_id === accountId)).toBe(false);
});
