import type { Page } from "@playwright/test";
import { expect, sandboxAccount, screenshot, signIn, test } from "./fixtures";

/**
 * Facebook Login for Business through the sandbox's dialog, in the browser: the Accounts page's
 * button, Pages ticked and Allow, Dispatch's picker when several Instagram accounts come back,
 * Cancel, a replayed callback, and a reel published through the account it connected.
 */

/** From the Accounts page to the sandbox's Facebook dialog, as a person gets there. */
async function openDialog(page: Page): Promise<void> {
  await page.goto("/dashboard/accounts");
  await page.getByRole("link", { name: "Continue with Facebook" }).click();
  await expect(page.getByRole("heading", { name: "Log in with Facebook" })).toBeVisible();
}

async function accountIds(page: Page): Promise<string[]> {
  const response = await page.request.get("/api/accounts");
  return ((await response.json()) as { data: { account_id: string }[] }).data.map((a) => a.account_id);
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

// The callback answers a refusal with 400 and its page, which Chromium notes in the console.
test.use({
  allowedConsoleErrors: [
    /status of 400 \(Bad Request\) \(http:\/\/[^)]*\/api\/accounts\/connect\/facebook\/(callback\?|choose)/,
  ],
});

test("two Pages allowed, one account picked: it appears with its username and a token that does not expire, and publishes a reel", async ({
  page,
}) => {
  const stamp = Date.now();
  const [picked, left] = [`e2e_fb_pick_${stamp}`, `e2e_fb_left_${stamp}`];
  const pickedId = await sandboxAccount(page, picked);
  const leftId = await sandboxAccount(page, left);
  const callbacks: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/api/accounts/connect/facebook/callback?")) callbacks.push(request.url());
  });

  await openDialog(page);
  await page.getByRole("checkbox", { name: `${picked} Page · Instagram @${picked}` }).check();
  await page.getByRole("checkbox", { name: `${left} Page · Instagram @${left}` }).check();
  await page.getByRole("button", { name: "Allow" }).click();

  await expect(page.getByRole("heading", { name: "Choose the accounts to connect" })).toBeVisible();
  await expect(page.getByRole("checkbox")).toHaveCount(2);
  await screenshot(page, "facebook-login-picker");
  const choice = await page.locator('input[name="choice"]').inputValue();
  await page.getByRole("checkbox", { name: `@${picked}` }).check();
  await page.getByRole("button", { name: "Connect the accounts ticked" }).click();

  await expect(page).toHaveURL(new RegExp(`/dashboard/accounts\\?connected=${pickedId}#account-${pickedId}$`));
  const card = page.locator(`[data-testid="account"][data-account-id="${pickedId}"]`);
  await expect(card).toContainText(`@${picked}`);
  await expect(card.getByTestId("account-status")).toHaveText("Connected");
  await expect(card.getByTestId("token-expiry")).toHaveText("Connected with Facebook · token does not expire");
  expect(await accountIds(page)).not.toContain(leftId);
  await screenshot(page, "accounts-facebook-login");

  // The picker's form sent again, now for the other account, connects nothing more: the choice was taken.
  const again = await page.request.post("/api/accounts/connect/facebook/choose", {
    form: { choice, account_id: leftId },
  });
  expect(again.status()).toBe(400);
  expect(await again.text()).toContain("already made");
  expect(await accountIds(page)).not.toContain(leftId);

  expect(callbacks).toHaveLength(1);
  const replay = await page.goto(callbacks[0]!);
  expect(replay?.status()).toBe(400);
  await expect(page.getByTestId("login-outcome")).toContainText("already used");

  await page.goto("/dashboard/reels");
  await expect(page.getByLabel("Account").locator(`option[value="${pickedId}"]`)).toHaveCount(1);
  await page.getByLabel("Account").selectOption(pickedId);
  await page.getByRole("button", { name: "Valid reel" }).click();
  await page.getByLabel("Caption").fill(`e2e reel through Facebook Login ${stamp}`);
  await page.getByRole("button", { name: "Publish reel" }).click();
  await expect(page).toHaveURL(/\/dashboard\/reels\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 45_000 });
  await expect(page.getByTestId("post-id")).toHaveText(/^\d+$/);
  const id = page.url().split("/").pop()!;
  const publication = (await (await page.request.get(`/api/reels/${id}`)).json()) as { account_id: string };
  expect(publication.account_id).toBe(pickedId);
});

test("Cancel at the dialog: 'You cancelled at Facebook', nothing connected", async ({ page }) => {
  const before = await accountIds(page);
  await openDialog(page);
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("heading", { name: "You cancelled at Facebook" })).toBeVisible();
  await page.getByRole("link", { name: "Back to Accounts" }).click();
  await expect(page.getByRole("link", { name: "Continue with Facebook" })).toBeVisible();
  expect(await accountIds(page)).toEqual(before);
});
