import { expect, screenshot, test } from "./fixtures";

test.describe("sign-in", () => {
  // The browser notes the deliberate 401 of a wrong key in the console.
  test.use({ allowedConsoleErrors: [/status of 401/] });

  test("signs in with the API key, keeps only an httpOnly session, and signs out", async ({ page, stack, context }) => {
    await page.goto("/dashboard/jobs");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fdashboard%2Fjobs$/);
    await screenshot(page, "sign-in");

    const key = page.getByLabel("API key");
    await key.fill("dk_not-a-real-key-at-all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(key).toHaveAttribute("aria-invalid", "true");
    await expect(key).toHaveAccessibleDescription("This key is not valid.");

    await key.fill(stack.apiKey);
    await key.press("Enter");
    await expect(page).toHaveURL(/\/dashboard\/jobs$/);
    await expect(page.getByTestId("tenant")).toHaveText(stack.tenantId);

    const [session] = (await context.cookies()).filter((c) => c.name === "dispatch_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/", secure: false });
    const stored = await page.evaluate(() =>
      JSON.stringify({ cookie: document.cookie, local: { ...localStorage }, session: { ...sessionStorage } }),
    );
    expect(stored).not.toContain(stack.apiKey);
    expect(stored).not.toContain("dispatch_session");

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/sign-in$/);
    expect((await context.cookies()).some((c) => c.name === "dispatch_session")).toBe(false);
    await page.goto("/dashboard/system");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fdashboard%2Fsystem$/);
  });

  test("the session API answers problem+json", async ({ request }) => {
    const missing = await request.post("/api/session", { data: {} });
    expect(missing.status()).toBe(422);
    expect(missing.headers()["content-type"]).toContain("application/problem+json");
    expect((await missing.json()).errors).toEqual([expect.objectContaining({ path: "api_key" })]);
    expect((await request.get("/api/session")).status()).toBe(401);
  });
});
