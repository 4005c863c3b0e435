import { expect, screenshot, signIn, submitJob, test } from "./fixtures";

const PAGES = [
  { path: "/dashboard/jobs", heading: "Generation jobs" },
  { path: "/dashboard/reels", heading: "Reels" },
  { path: "/dashboard/accounts", heading: "Accounts" },
  { path: "/dashboard/system", heading: "System" },
];

for (const viewport of [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
  { name: "desktop-dark", width: 1280, height: 900, dark: true },
]) {
  test(`every page renders without console errors (${viewport.name})`, async ({ page }) => {
    await page.setViewportSize({ width: viewport.width, height: viewport.height });
    if (viewport.dark) await page.emulateMedia({ colorScheme: "dark" });
    await page.goto("/sign-in");
    await expect(page.getByLabel("API key")).toBeVisible();
    await screenshot(page, `${viewport.name}-sign-in`);

    await signIn(page);
    const jobId = await submitJob(page, { prompt: "Screenshots of every page show", max_tokens: 30 });
    for (const { path, heading } of PAGES) {
      await page.goto(path);
      await expect(page.getByRole("heading", { level: 1, name: heading })).toBeVisible();
      await expect(page.getByRole("status").filter({ hasText: /Loading|Reading/ })).toHaveCount(0);
      // Nothing may stick out sideways, on a phone especially.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await screenshot(page, `${viewport.name}${path.replaceAll("/", "-")}`);
    }
    await page.goto(`/dashboard/jobs/${jobId}`);
    await expect(page.getByTestId("job-status").first()).toHaveText("COMPLETED", { timeout: 60_000 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    await screenshot(page, `${viewport.name}-job`);
  });
}

test("the browser's icons answer: /favicon.ico (which Chromium asks for by itself) and the SVG the pages link", async ({
  page,
  request,
}) => {
  const ico = await request.get("/favicon.ico");
  expect(ico.status()).toBe(200);
  expect(ico.headers()["content-type"]).toBe("image/x-icon");
  // An ICO directory: reserved 0, type 1 (icon), at least one image.
  const bytes = await ico.body();
  expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4) > 0]).toEqual([0, 1, true]);

  await page.goto("/sign-in");
  const links = await page
    .locator('head link[rel="icon"]')
    .evaluateAll((els) => els.map((el) => new URL((el as HTMLLinkElement).href).pathname));
  expect(links).toContain("/favicon.ico");
  const svgPath = links.find((href) => href.startsWith("/icon"));
  expect(svgPath).toBeDefined();
  const svg = await request.get(svgPath!);
  expect(svg.status()).toBe(200);
  expect(svg.headers()["content-type"]).toBe("image/svg+xml");
});

test("the system page shows health, lag per partition and jobs by status, refreshed live", async ({ page }) => {
  await signIn(page);
  await page.goto("/dashboard/system");
  await expect(page.getByTestId("health-redis")).toContainText("Healthy");
  await expect(page.getByTestId("health-kafka")).toContainText("Healthy");
  await expect(page.getByTestId("health-workers")).toContainText(/[1-9]/);
  const lag = page.getByTestId("lag-ai.generation.requests");
  await expect(lag.locator("tbody tr")).toHaveCount(6);
  const completed = page.getByTestId("jobs-by-status").locator('[data-status="COMPLETED"]');
  const before = Number(await completed.textContent());

  // A job finishing elsewhere shows up without a reload (other specs' jobs may finish meanwhile too).
  const jobId = await submitJob(page, { prompt: "The system page refreshes", max_tokens: 10 });
  await expect
    .poll(async () => Number(await completed.textContent()), { timeout: 60_000 })
    .toBeGreaterThanOrEqual(before + 1);
  await expect(page.getByTestId("recent-completions").locator(`a[href="/dashboard/jobs/${jobId}"]`)).toBeVisible();
  await screenshot(page, "system");
});

test.describe("an unknown page", () => {
  test.use({ allowedConsoleErrors: [/status of 404/] });

  test("answers 404 with Dispatch's own page and a way back", async ({ page }) => {
    const response = await page.goto("/dashboard/no-such-page");
    expect(response?.status()).toBe(404);
    await expect(page.getByRole("heading", { level: 1, name: "This page does not exist" })).toBeVisible();
    await page.getByRole("link", { name: "Go to the dashboard" }).click();
    await expect(page).toHaveURL(/\/(sign-in|dashboard\/jobs)/);
  });
});
