import { randomUUID } from "node:crypto";
import { expect, screenshot, signIn, test } from "./fixtures";

for (const viewport of [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
]) {
  test.describe(viewport.name, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });

    test("a shared job link opened signed out returns to that job after signing in", async ({
      page,
      request,
      stack,
    }) => {
      const submitted = await request.post("/v1/jobs", {
        headers: { authorization: `Bearer ${stack.apiKey}` },
        data: { tenant_id: stack.tenantId, model_name: "local-ngram", prompt: "A shared link", max_tokens: 5 },
      });
      expect(submitted.status()).toBe(202);
      const { job_id: jobId } = (await submitted.json()) as { job_id: string };

      await page.goto(`/dashboard/jobs/${jobId}?tab=output`);
      await expect(page).toHaveURL(`/sign-in?next=${encodeURIComponent(`/dashboard/jobs/${jobId}?tab=output`)}`);
      await page.getByLabel("API key").fill(stack.apiKey);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).toHaveURL(`/dashboard/jobs/${jobId}?tab=output`);
      await expect(page.getByTestId("job-status").first()).toBeVisible();
    });

    test("sign-in never sends anyone to another site", async ({ page, stack }) => {
      for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
        // Off the dashboard first, so its polling does not meet a signed-out 401 in between.
        await page.goto("about:blank");
        await page.context().clearCookies();
        await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
        await page.getByLabel("API key").fill(stack.apiKey);
        await page.getByRole("button", { name: "Sign in" }).click();
        await expect(page).toHaveURL(/\/dashboard\/jobs$/);
        expect(new URL(page.url()).host).toBe(new URL(stack.url).host);
      }
    });
  });
}

test.describe("not found", () => {
  test.use({ allowedConsoleErrors: [/status of 404/] });

  for (const viewport of [
    { name: "desktop", width: 1280, height: 900 },
    { name: "phone", width: 390, height: 844 },
  ]) {
    test(`unknown job and reel ids answer 404 inside the dashboard, with a way back (${viewport.name})`, async ({
      page,
    }) => {
      await page.setViewportSize(viewport);
      await signIn(page);
      for (const { path, heading, back, home } of [
        {
          path: `/dashboard/jobs/${randomUUID()}`,
          heading: "No such job",
          back: "Back to jobs",
          home: "/dashboard/jobs",
        },
        { path: "/dashboard/jobs/not-an-id", heading: "No such job", back: "Back to jobs", home: "/dashboard/jobs" },
        {
          path: `/dashboard/reels/${randomUUID()}`,
          heading: "No such publication",
          back: "Back to reels",
          home: "/dashboard/reels",
        },
      ]) {
        const response = await page.goto(path);
        expect(response?.status()).toBe(404);
        await expect(page.getByRole("heading", { level: 1, name: heading })).toBeVisible();
        // The dashboard's own frame: its navigation is there.
        await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
        await screenshot(page, `not-found${path.startsWith("/dashboard/reels") ? "-reel" : "-job"}-${viewport.name}`);
        await page.getByRole("link", { name: back }).click();
        await expect(page).toHaveURL(home);
      }
    });
  }
});
