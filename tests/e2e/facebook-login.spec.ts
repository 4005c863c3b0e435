import type { Page } from "@playwright/test";
import { expect, sandboxAccount, screenshot, signIn, smallControls, test, violations } from "./fixtures";

/**
 * Facebook Login for Business through the sandbox's dialog, in the browser: the Accounts page's
 * button, Pages ticked and Allow, Dispatch's picker when several Instagram accounts come back,
 * Cancel, a replayed callback, a session that ended meanwhile, a reel published through the
 * account it connected, and the picker's and outcome's dashboard pages checked with axe.
 */

/** From the Accounts page to the sandbox's Facebook dialog, as a person gets there. */
async function openDialog(page: Page): Promise<void> {
  await page.goto("/dashboard/accounts");
  await page.getByRole("link", { name: "Continue with Facebook" }).click();
  await expect(page.getByRole("heading", { name: "Log in with Facebook" })).toBeVisible();
}

/** Ticks these accounts' Pages at the dialog. */
async function tickPages(page: Page, usernames: string[]): Promise<void> {
  for (const username of usernames)
    await page.getByRole("checkbox", { name: `${username} Page · Instagram @${username}` }).check();
}

async function accountIds(page: Page): Promise<string[]> {
  const response = await page.request.get("/api/accounts");
  return ((await response.json()) as { data: { account_id: string }[] }).data.map((a) => a.account_id);
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
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
  await tickPages(page, [picked, left]);
  await page.getByRole("button", { name: "Allow" }).click();

  await expect(page).toHaveURL(/\/dashboard\/accounts\/connect\/choose\?choice=[A-Za-z0-9_-]{32}#account-choice$/);
  await expect(page.getByRole("heading", { name: "Choose the accounts to connect" })).toBeVisible();
  await expect(page.getByRole("checkbox")).toHaveCount(2);
  expect(await page.content()).not.toMatch(/IGSANDBOX|access_token/);
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
    maxRedirects: 0,
  });
  expect(again.status()).toBe(303);
  await page.goto(again.headers().location!);
  await expect(page.getByTestId("login-outcome")).toContainText("already made");
  expect(await accountIds(page)).not.toContain(leftId);

  expect(callbacks).toHaveLength(1);
  await page.goto(callbacks[0]!);
  await expect(page).toHaveURL(/\/dashboard\/accounts\/connect\?outcome=[A-Za-z0-9_-]{32}#login-outcome$/);
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

test("back from Facebook after the session ended: sign in again, then the page says nothing was connected", async ({
  page,
  stack,
}) => {
  const username = `e2e_fb_out_${Date.now()}`;
  const accountId = await sandboxAccount(page, username);
  await openDialog(page);
  await tickPages(page, [username]);
  // The dialog serves a signed-in person only, so the session ends between its Allow and the callback:
  // Allow's answer (a redirect to the callback) is held back and its address kept. A route does not see
  // the request a redirect leads to, so it is the dialog's POST that is taken, without following it.
  let callback: string | undefined;
  await page.route(
    (url) => url.pathname.endsWith("/dialog/oauth"),
    async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      const answer = await route.fetch({ maxRedirects: 0 });
      callback = answer.headers()["location"];
      await route.fulfill({ status: 200, contentType: "text/html", body: "<p>Held back before the callback.</p>" });
    },
  );
  await page.getByRole("button", { name: "Allow" }).click();
  await expect.poll(() => callback).toBeTruthy();
  await page.unrouteAll();
  await page.context().clearCookies();
  await page.goto(callback!);

  await expect(page.getByRole("heading", { name: "Sign in to Dispatch" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Nothing was connected" })).toBeVisible();
  await screenshot(page, "login-pages-sign-in");
  await page.getByLabel("API key").fill(stack.apiKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Nothing was connected" })).toBeVisible();
  await expect(page.getByTestId("login-outcome")).toContainText("not signed in");
  expect(await accountIds(page)).not.toContain(accountId);
});

/** Axe in light and dark, then every control's height on a phone: all without reloading, so the choice's age does not matter. */
async function checkLooks(page: Page, name: string): Promise<void> {
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    expect(await violations(page), `${name} (${colorScheme})`).toEqual([]);
    await screenshot(page, `${name}-${colorScheme}`);
  }
  const desktop = page.viewportSize()!;
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await smallControls(page), name).toEqual([]);
  // Nothing reaches past the page's content box: long usernames wrap instead of leaving their card.
  const overflowing = await page.locator("main").evaluate((main) => {
    const edge = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
    return [...main.querySelectorAll("*")]
      .filter((el) => el.getBoundingClientRect().right > edge + 0.5)
      .map((el) => `${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim().slice(0, 30)}"`);
  });
  expect(overflowing, name).toEqual([]);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(desktop);
  await page.emulateMedia({ colorScheme: "light" });
}

test("the picker and an outcome page pass axe in light and dark, and every control is 44 px to tap on a phone", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const stamp = Date.now();
  const usernames = [`e2e_fb_axe_a_${stamp}`, `e2e_fb_axe_b_${stamp}`];
  for (const username of usernames) await sandboxAccount(page, username);
  await openDialog(page);
  await tickPages(page, usernames);
  await page.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByRole("heading", { name: "Choose the accounts to connect" })).toBeVisible();
  await checkLooks(page, "login-pages-picker");

  // Nothing ticked: the outcome page says so, and the choice is left for going back.
  await page.getByRole("button", { name: "Connect the accounts ticked" }).click();
  await expect(page.getByRole("heading", { name: "Nothing was connected" })).toBeVisible();
  await expect(page.getByTestId("login-outcome")).toContainText("No account was ticked");
  await checkLooks(page, "login-pages-outcome");
});
