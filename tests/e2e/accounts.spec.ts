import type { APIRequestContext } from "@playwright/test";
import { expect, screenshot, signIn, test } from "./fixtures";

/** The sandbox's control surface, called from this machine as a person rehearsing would. */
async function sandboxAccount(
  request: APIRequestContext,
  username: string,
): Promise<{ account_id: string; access_token: string }> {
  const response = await request.post("/graph/_sandbox/accounts", { data: { username } });
  expect(response.status()).toBe(201);
  return response.json();
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("connects an account: status, username and quota shown, the token never", async ({ page }) => {
  const username = `e2e_${Date.now()}`;
  const { account_id, access_token } = await sandboxAccount(page.request, username);
  await page.goto("/dashboard/accounts");
  await page.getByRole("link", { name: "Accounts" }).waitFor();
  const form = page.getByRole("form", { name: "Connect an account" });
  await form.getByLabel("Instagram account id").fill(account_id);
  await form.getByLabel("Access token").fill(access_token);
  await form.getByLabel("Label").fill("Brand account");
  await form.getByRole("button", { name: "Connect" }).click();

  const card = page.locator(`[data-testid="account"][data-account-id="${account_id}"]`);
  await expect(card).toBeVisible();
  await expect(card).toContainText("Brand account");
  await expect(card).toContainText(`@${username}`);
  await expect(card.getByTestId("account-status")).toHaveText("Connected");
  await expect(card.getByTestId("quota")).toHaveText("0 / 100");
  await expect(card.getByRole("meter")).toHaveAttribute("aria-valuemax", "100");
  await expect(form.getByLabel("Access token")).toHaveValue("");
  expect(await page.content()).not.toContain(access_token);
  await screenshot(page, "accounts");
});

test("a needs_reconnect account shows a Reconnect action; reconnecting lets its waiting reel publish", async ({
  page,
  stack,
}) => {
  const { account_id, access_token } = await sandboxAccount(page.request, `e2e_expiring_${Date.now()}`);
  expect((await page.request.post("/api/accounts", { data: { account_id, access_token } })).status()).toBe(201);
  expect(
    (await page.request.post(`/graph/_sandbox/accounts/${account_id}/token`, { data: { state: "expired" } })).status(),
  ).toBe(200);

  const submitted = await page.request.post("/api/reels", {
    data: { account_id, video_url: `${stack.url}/samples/reel-valid.mp4`, caption: "waits for a reconnect" },
  });
  expect(submitted.status()).toBe(202);
  const { publication_id } = (await submitted.json()) as { publication_id: string };
  await expect
    .poll(
      async () =>
        ((await (await page.request.get(`/api/reels/${publication_id}`)).json()) as { scheduled_reason: string | null })
          .scheduled_reason,
      { timeout: 30_000 },
    )
    .toBe("needs_reconnect");

  await page.goto("/dashboard/accounts");
  const card = page.locator(`[data-testid="account"][data-account-id="${account_id}"]`);
  await expect(card.getByTestId("account-status")).toHaveText("Needs reconnect");
  await expect(card).toContainText("Its reels wait until it is reconnected");
  await screenshot(page, "accounts-needs-reconnect");

  const fresh = await page.request.post(`/graph/_sandbox/accounts/${account_id}/token`, { data: { state: "valid" } });
  const { access_token: newToken } = (await fresh.json()) as { access_token: string };
  await card.getByRole("button", { name: "Reconnect" }).click();
  const form = card.getByRole("form", { name: `Reconnect account ${account_id}` });
  await form.getByLabel("New access token").fill(newToken);
  await form.getByRole("button", { name: "Reconnect" }).click();
  await expect(card.getByTestId("account-status")).toHaveText("Connected");

  await page.goto(`/dashboard/reels/${publication_id}`);
  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 45_000 });
  await expect(page.getByTestId("timeline")).toContainText("Reconnected");
});
