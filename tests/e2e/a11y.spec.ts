import { randomUUID } from "node:crypto";
import type { APIRequestContext, Page } from "@playwright/test";
import { isFinalJob } from "@/lib/jobs/status";
import { isSettledPublication } from "@/lib/reels/status";
import { expect, signIn, smallControls, submitJob, test, violations } from "./fixtures";

async function waitFor<T>(request: APIRequestContext, url: string, done: (body: T) => boolean): Promise<T> {
  let body: T | undefined;
  await expect
    .poll(async () => done((body = (await (await request.get(url)).json()) as T)), { timeout: 45_000 })
    .toBe(true);
  return body!;
}

/** A reel through the sandbox, settled (or left scheduled), so its page has every part to check. */
async function publication(page: Page, videoUrl: string, extra: Record<string, unknown> = {}) {
  const accounts = (await (await page.request.get("/api/accounts")).json()) as { data: { account_id: string }[] };
  const response = await page.request.post("/api/reels", {
    data: { account_id: accounts.data[0].account_id, video_url: videoUrl, caption: "Axe\nchecks this", ...extra },
  });
  expect(response.status()).toBe(202);
  const { publication_id: id } = (await response.json()) as { publication_id: string };
  if (!extra.publish_at)
    await waitFor<{ status: string }>(page.request, `/api/reels/${id}`, (p) => isSettledPublication(p.status as never));
  return id;
}

test.describe("axe", () => {
  test.use({ allowedConsoleErrors: [/status of 404/] });

  // One test per colour scheme: each page's axe run is slow on a busy machine, and two shorter tests
  // each keep their own time limit.
  for (const colorScheme of ["light", "dark"] as const) {
    test(`every dashboard page passes axe with no violations (${colorScheme})`, async ({ page, stack }) => {
      test.setTimeout(300_000);
      await signIn(page);
      const [jobId, failed, published, scheduled] = await Promise.all([
        submitJob(page, { prompt: "Accessibility of the job page", max_tokens: 20 }),
        publication(page, `${stack.url}/samples/reel-too-short.mp4`),
        publication(page, `${stack.url}/samples/reel-valid.mp4`),
        publication(page, `${stack.url}/samples/reel-valid.mp4`, {
          publish_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
        }),
      ]);
      await waitFor<{ status: string }>(page.request, `/jobs/${jobId}`, (j) => isFinalJob(j.status));
      const pages = [
        "/dashboard/jobs",
        `/dashboard/jobs/${jobId}`,
        "/dashboard/reels",
        `/dashboard/reels/${failed}`,
        `/dashboard/reels/${published}`,
        `/dashboard/reels/${scheduled}`,
        "/dashboard/accounts",
        "/dashboard/system",
        "/dashboard/no-such-page",
        `/dashboard/jobs/${randomUUID()}`,
      ];

      await page.emulateMedia({ colorScheme });
      for (const path of pages) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
        await expect(page.getByRole("status").filter({ hasText: /Loading|Reading/ })).toHaveCount(0);
        if (path.endsWith(published)) await expect(page.getByTestId("published-reel")).toBeVisible();
        expect(await violations(page), `${path} (${colorScheme})`).toEqual([]);
      }
      await page.goto("about:blank");
      await page.context().clearCookies();
      await page.goto("/sign-in");
      await expect(page.getByLabel("API key")).toBeVisible();
      expect(await violations(page), `/sign-in (${colorScheme})`).toEqual([]);
    });
  }
});

test("every control on a phone is at least 44 px to tap", async ({ page, stack }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page);
  const jobId = await submitJob(page, { prompt: "Tap targets", max_tokens: 5 });
  await waitFor<{ status: string }>(page.request, `/jobs/${jobId}`, (j) => isFinalJob(j.status));
  const scheduled = await publication(page, `${stack.url}/samples/reel-valid.mp4`, {
    publish_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  });
  for (const path of [
    "/dashboard/jobs",
    `/dashboard/jobs/${jobId}`,
    "/dashboard/reels",
    `/dashboard/reels/${scheduled}`,
    "/dashboard/accounts",
    "/dashboard/system",
  ]) {
    await page.goto(path);
    await expect(page.getByRole("status").filter({ hasText: /Loading|Reading/ })).toHaveCount(0);
    const small = await smallControls(page);
    expect(small, path).toEqual([]);
  }
});
