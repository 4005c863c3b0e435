import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, screenshot, signIn, test } from "./fixtures";

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

async function publish(page: Page, fill: () => Promise<void>) {
  await page.goto("/dashboard/reels");
  await expect(page.getByLabel("Account")).toHaveValue(/^\d+$/);
  await fill();
  await page.getByRole("button", { name: "Publish reel" }).click();
  await expect(page).toHaveURL(/\/dashboard\/reels\/[0-9a-f-]{36}$/);
}

/** Whether a <video> has frames to show and its playhead moves once played. */
async function expectPlaying(page: Page, selector: string) {
  const video = page.locator(selector).first();
  await video.scrollIntoViewIfNeeded();
  await video.evaluate((v: HTMLVideoElement) => v.play());
  await expect
    .poll(() => video.evaluate((v: HTMLVideoElement) => v.readyState), { timeout: 15_000 })
    .toBeGreaterThanOrEqual(2);
  const start = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
  await expect
    .poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime), { timeout: 15_000 })
    .toBeGreaterThan(start);
}

test("publishes the sample reel, shows the timeline to PUBLISHED, and plays it", async ({ page }) => {
  const caption = `e2e reel ${Date.now()} #dispatch`;
  await publish(page, async () => {
    await page.getByRole("button", { name: "Valid reel" }).click();
    await expect(page.getByLabel("Video URL")).toHaveValue(/\/samples\/reel-valid\.mp4$/);
    await page.getByLabel("Caption").fill(caption);
    await expect(page.getByTestId("caption-count")).toHaveText(`${caption.length} / 2,200`);
  });

  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 45_000 });
  const timeline = page.getByTestId("timeline");
  await expect(page.getByTestId("container-id")).toHaveText(/^\d+$/);
  const containerId = await page.getByTestId("container-id").textContent();
  await expect(timeline).toContainText(containerId!);
  await expect(timeline.getByTestId("poll").first()).toContainText(/Poll #1 · (IN_PROGRESS|FINISHED)/);
  await expect(timeline.getByTestId("poll").last()).toContainText("FINISHED");
  await expect(timeline.getByTestId("poll").first().locator("time")).toHaveText(/^\d{2}:\d{2}:\d{2}$/);
  await expect(page.getByTestId("post-id")).toHaveText(/^\d+$/);
  await screenshot(page, "reel-published");

  await expectPlaying(page, "video");

  await page.goto("/dashboard/reels");
  const published = page.getByTestId("published-reel").filter({ hasText: caption });
  await expect(published).toHaveCount(1);
  // A caption's line breaks show as written.
  await expect(published.getByTestId("reel-caption")).toHaveCSS("white-space", "pre-line");
  await expectPlaying(page, `[data-testid="published-reel"]:has-text("${caption}") video`);
  await expect(page.getByTestId("recent-publications").getByText(caption)).toBeVisible();
  await screenshot(page, "reels");
});

test("publishes a reel with a cover frame and collaborators from More options; the published reel shows them", async ({
  page,
}) => {
  await publish(page, async () => {
    await page.getByRole("button", { name: "Valid reel" }).click();
    await page.getByText("More options").click();
    await page.getByRole("radio", { name: "A frame of the video" }).check();
    const slider = page.getByRole("slider", { name: "Cover frame" });
    // The slider waits for the video's length before it lets a frame be chosen.
    await expect(slider).toBeEnabled({ timeout: 15_000 });
    await slider.focus();
    for (let i = 0; i < 12; i++) await slider.press("ArrowRight");
    await expect(slider).toHaveValue("1200");
    const preview = page.getByTestId("cover-frame-preview");
    await expect(preview).toHaveAttribute("aria-label", "Cover preview: the frame at 1.2 s");
    await expect.poll(() => preview.evaluate((v: HTMLVideoElement) => v.currentTime)).toBeCloseTo(1.2, 1);
    await page.getByLabel("Collaborators").fill("@ana.runs, bo_b");
    // The options, open, are as accessible as the rest of the form.
    const axe = await new AxeBuilder({ page }).include('form[aria-label="Publish a reel"]').analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
    await screenshot(page, "reel-more-options");
  });

  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 45_000 });
  await expect(page.getByTestId("reel-cover")).toHaveText("Frame at 1.2 s");
  await expect(page.getByTestId("reel-collaborators")).toHaveText("@ana.runs, @bo_b");
  const id = page.url().split("/").pop()!;
  const view = (await (await page.request.get(`/api/reels/${id}`)).json()) as Record<string, unknown>;
  expect(view).toMatchObject({ thumb_offset: 1200, collaborators: ["ana.runs", "bo_b"], cover_url: null });
});

test.describe("failures", () => {
  // The form's preview tries the unreachable URL too, and the browser notes that in the console.
  test.use({ allowedConsoleErrors: [/127\.0\.0\.1:9\/nowhere\.mp4/] });

  for (const { name, url, code, subcode } of [
    { name: "a too-short video", url: "/samples/reel-too-short.mp4", code: "352", subcode: "2207026" },
    { name: "an unreachable URL", url: "http://127.0.0.1:9/nowhere.mp4", code: "9004", subcode: "2207052" },
  ]) {
    test(`shows the Graph failure for ${name} once: headline, codes for support, what to do; the timeline in event order`, async ({
      page,
      stack,
    }) => {
      await publish(page, async () => {
        await page.getByLabel("Video URL").fill(url.startsWith("/") ? `${stack.url}${url}` : url);
      });
      await expect(page.getByTestId("publication-status")).toHaveText("FAILED", { timeout: 45_000 });
      const id = page.url().split("/").pop()!;
      const view = (await (await page.request.get(`/api/reels/${id}`)).json()) as {
        error: { headline: string; remedy: string; fbtrace_id: string | null };
      };
      const error = page.getByTestId("publication-error");
      await expect(error.getByTestId("error-headline")).toHaveText(view.error.headline);
      await expect(error.getByTestId("error-code")).toHaveText(code);
      await expect(error.getByTestId("error-subcode")).toHaveText(subcode);
      await expect(error.getByTestId("error-fbtrace")).toHaveText(view.error.fbtrace_id ?? "—");
      await expect(error.getByTestId("error-advice")).toContainText(view.error.remedy);
      // Headline first, the codes next, what to do last.
      const order = await error
        .locator("[data-testid]")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")));
      expect(order.filter((t) => ["error-headline", "error-code", "error-advice"].includes(t!))).toEqual([
        "error-headline",
        "error-code",
        "error-advice",
      ]);

      // Ordered by each event's seq, whatever their times say: the failure comes after what caused it.
      const seqs = (
        await page
          .getByTestId("timeline")
          .locator("li")
          .evaluateAll((els) => els.map((el) => el.getAttribute("data-seq")))
      ).map(Number);
      expect(seqs.length).toBeGreaterThan(1);
      expect(seqs.every((n) => Number.isInteger(n) && n > 0)).toBe(true);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      await screenshot(page, `reel-failed-${code}`);

      // The list reads the same headline.
      await page.goto("/dashboard/reels");
      await expect(page.locator(`[data-publication-id="${id}"]`).getByTestId("error-headline")).toHaveText(
        view.error.headline,
      );
    });
  }
});

test.describe("validation", () => {
  test.use({ allowedConsoleErrors: [/status of 422/] });

  test("shows each problem+json error next to its field", async ({ page }) => {
    await page.goto("/dashboard/reels");
    await expect(page.getByLabel("Account")).toHaveValue(/^\d+$/);
    await page.getByLabel("Video URL").fill("not a url");
    await page.getByLabel("Caption").fill("x".repeat(2201));
    await expect(page.getByTestId("caption-count")).toHaveText("2,201 / 2,200");
    await page.getByRole("button", { name: "Publish reel" }).click();

    await expect(page.getByLabel("Video URL")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Video URL")).toHaveAccessibleDescription(/URL/i);
    await expect(page.getByLabel("Caption")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Caption")).toHaveAccessibleDescription(/2200|2,200/);
    await expect(page.getByLabel("Account")).not.toHaveAttribute("aria-invalid", "true");
    await expect(page).toHaveURL(/\/dashboard\/reels$/);
    await screenshot(page, "reels-validation");

    // A field's error goes once its value changes (here by picking a sample); the others stay until the next submission.
    await page.getByRole("button", { name: "Valid reel" }).click();
    await expect(page.getByLabel("Video URL")).not.toHaveAttribute("aria-invalid", "true");
    await expect(page.getByText("Must be an http(s) URL")).toHaveCount(0);
    await expect(page.getByLabel("Caption")).toHaveAttribute("aria-invalid", "true");
  });
});
