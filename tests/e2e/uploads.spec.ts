import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { largeReel } from "../large-reel";
import { expect, screenshot, signIn, test } from "./fixtures";
import { UPLOAD_MAX_BYTES } from "./stack-file";

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

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

test("uploads a local file with a progress bar, previews it from the disk, and publishes it", async ({ page }) => {
  const file = largeReel(path.resolve(__dirname, "../.."));
  await page.goto("/dashboard/reels");
  await expect(page.getByLabel("Account")).toHaveValue(/^\d+$/);
  await page.getByRole("radio", { name: "From a file" }).click();

  // A slow line, so the bar has steps to show: every value it takes is recorded.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: 4 * 1024 * 1024,
  });
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { progressSeen: number[] }).progressSeen = seen;
    new MutationObserver(() => {
      const bar = document.querySelector('[role="progressbar"]');
      const value = Number(bar?.getAttribute("aria-valuenow"));
      if (bar && seen.at(-1) !== value) seen.push(value);
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-valuenow"] });
  });

  await page.getByLabel("Video file").setInputFiles(file);
  const bar = page.getByRole("progressbar", { name: "Upload progress" });
  await expect(bar).toBeVisible();
  await expect(bar).toHaveAttribute("aria-valuenow", "100", { timeout: 30_000 });
  await expect(page.getByTestId("upload-status")).toHaveText(
    new RegExp(`^Uploaded ${path.basename(file).replace(".", "\\.")} \\(`),
  );
  const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
  expect(
    seen.some((value) => value > 0 && value < 100),
    `progress values: ${seen.join(", ")}`,
  ).toBe(true);
  expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });

  await expectPlaying(page, '[data-testid="upload-preview"]');
  expect(await page.getByTestId("upload-preview").getAttribute("src")).toMatch(/^blob:/);
  await screenshot(page, "reel-upload");

  const caption = `e2e upload ${Date.now()}`;
  await page.getByLabel("Caption").fill(caption);
  await page.getByRole("button", { name: "Publish reel" }).click();
  await expect(page).toHaveURL(/\/dashboard\/reels\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 45_000 });
  const timeline = page.getByTestId("timeline");
  await expect(timeline).toContainText("Uploading");
  await expect(timeline).toContainText("Upload complete");
  await expectPlaying(page, "video");
  await screenshot(page, "reel-upload-published");
});

test.describe("a file that is not a video", () => {
  test.use({ allowedConsoleErrors: [/status of 422/] });

  test("shows why the upload was refused", async ({ page }) => {
    await page.goto("/dashboard/reels");
    await page.getByRole("radio", { name: "From a file" }).click();
    await page.getByLabel("Video file").setInputFiles({
      name: "notes.mp4",
      mimeType: "video/mp4",
      buffer: Buffer.from("not a video at all ".repeat(50)),
    });
    await expect(page.getByRole("alert").filter({ hasText: "The file is not an MP4 or MOV video" })).toBeVisible();
    await expect(page.getByTestId("upload-status")).toHaveText("Upload of notes.mp4 failed");
  });
});

test("refuses a file over the upload limit before sending it, in the server's words", async ({ page }) => {
  // A sparse file one byte past the stack's UPLOAD_MAX_BYTES: the browser reads its size, not its bytes.
  const dir = mkdtempSync(path.join(tmpdir(), "dispatch-e2e-"));
  const file = path.join(dir, "too-long.mp4");
  writeFileSync(file, "");
  truncateSync(file, UPLOAD_MAX_BYTES + 1);
  const uploads: string[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/v1/uploads") uploads.push(request.method());
  });
  try {
    await page.goto("/dashboard/reels");
    await page.getByRole("radio", { name: "From a file" }).click();
    await page.getByLabel("Video file").setInputFiles(file);
    await expect(page.getByRole("alert").filter({ hasText: "upload limit" })).toHaveText(
      `The video is over the ${UPLOAD_MAX_BYTES / (1024 * 1024)} MB upload limit.`,
    );
    await expect(page.getByTestId("upload-status")).toHaveText("Upload of too-long.mp4 failed");
    expect(uploads).toEqual([]);
    await screenshot(page, "reel-upload-too-large");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("takes a FormData the browser encodes itself, with its mixed-case ----WebKitFormBoundary…", async ({ page }) => {
  await page.goto("/dashboard/reels");
  const sent = page.waitForRequest((request) => request.url().endsWith("/v1/uploads") && request.method() === "POST");
  const answer = await page.evaluate(async () => {
    const video = await (await fetch("/samples/reel-valid.mp4")).blob();
    const form = new FormData();
    form.set("note", "a text field before the file");
    form.set("file", new File([video], "reel.mp4", { type: "video/mp4" }));
    const response = await fetch("/v1/uploads", { method: "POST", body: form });
    return {
      status: response.status,
      body: (await response.json()) as { upload_id?: string; size?: number; detail?: string },
    };
  });
  expect((await sent).headers()["content-type"]).toMatch(
    /^multipart\/form-data; boundary=----WebKitFormBoundary[0-9A-Za-z]+$/,
  );
  expect(answer.status, answer.body.detail).toBe(201);
  expect(answer.body).toEqual({ upload_id: expect.stringMatching(/^[0-9a-f-]{36}$/), size: expect.any(Number) });
});
