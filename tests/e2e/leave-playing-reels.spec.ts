import { createReadStream, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Page } from "@playwright/test";
import { assertNoUncaught } from "../../scripts/lib/uncaught";
import { largeReel } from "../large-reel";
import { expect, signIn, test } from "./fixtures";

/**
 * Issue 14, walked as a user does: published reels of realistic size loading and playing on the
 * Reels page, left for Jobs mid-transfer, again and again, and once while a publication's events
 * stream is open. A browser cancels video range requests constantly; the web server must not log
 * an uncaught exception for any of them.
 */

let files: Server;
let videoUrl: string;

test.beforeAll(async () => {
  const video = largeReel(path.resolve(__dirname, "../.."));
  const size = statSync(video).size;
  // The sandbox fetches the video like any host's; this one is private, which the embedded stack allows.
  files = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    createReadStream(video)
      .on("error", () => res.destroy())
      .pipe(res);
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  videoUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/large-reel.mp4`;
});

test.afterAll(async () => {
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
});

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

async function publishLargeReel(page: Page, caption: string): Promise<string> {
  const accounts = (await (await page.request.get("/api/accounts")).json()) as { data: { account_id: string }[] };
  const response = await page.request.post("/api/reels", {
    data: { account_id: accounts.data[0]?.account_id, video_url: videoUrl, caption },
  });
  expect(response.status()).toBe(202);
  return ((await response.json()) as { publication_id: string }).publication_id;
}

async function statusOf(page: Page, publicationId: string): Promise<string> {
  return ((await (await page.request.get(`/api/reels/${publicationId}`)).json()) as { status: string }).status;
}

async function goToJobs(page: Page) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).first().click();
  await expect(page).toHaveURL(/\/dashboard\/jobs$/);
}

test("leaving playing reels and a live publication logs no uncaught exception in the server", async ({
  page,
  stack,
}) => {
  test.setTimeout(240_000);
  const logFrom = statSync(stack.logFile).size;
  const ids = await Promise.all([1, 2, 3].map((n) => publishLargeReel(page, `large reel ${n} ${Date.now()}`)));
  for (const id of ids) await expect.poll(() => statusOf(page, id), { timeout: 90_000 }).toBe("PUBLISHED");

  const videos = page.locator('[data-testid="published-reel"] video');
  for (let round = 0; round < 6; round++) {
    await page.goto("/dashboard/reels");
    await expect(videos.first()).toBeVisible();
    if (round % 2 === 0) {
      // Loaded and playing, several at once: range requests in flight, the server held back by the socket.
      await expect.poll(() => videos.first().evaluate((v: HTMLVideoElement) => v.readyState)).toBeGreaterThanOrEqual(1);
      await videos.evaluateAll((all: HTMLVideoElement[]) =>
        all.slice(0, 4).forEach((v) => void v.play().catch(() => {})),
      );
      await expect.poll(() => videos.first().evaluate((v: HTMLVideoElement) => v.currentTime)).toBeGreaterThan(0);
      // A seek far ahead makes the browser drop its request and open another at the new offset; the
      // seek ends once that one brings data, and the videos go on loading as the page is left.
      await videos.first().evaluate((v: HTMLVideoElement) => (v.currentTime = v.duration * 0.8));
      await expect
        .poll(() => videos.first().evaluate((v: HTMLVideoElement) => !v.seeking && v.readyState >= 2))
        .toBe(true);
    }
    // Odd rounds leave while the videos' metadata is still loading.
    await goToJobs(page);
  }

  // A publication of the large video, left while its events stream is open, then revisited once it plays.
  const live = await publishLargeReel(page, `large reel live ${Date.now()}`);
  await page.goto(`/dashboard/reels/${live}`);
  await expect(page.getByTestId("publication-status")).toBeVisible();
  await goToJobs(page);
  await page.goBack();
  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 90_000 });
  const video = page.locator("video").first();
  await video.evaluate((v: HTMLVideoElement) => void v.play().catch(() => {}));
  await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime)).toBeGreaterThan(0);
  await goToJobs(page);

  // The server notices the cancelled transfers a moment after the browser leaves: once it has
  // closed every file it was sending, what it logged about them is all there.
  await expect
    .poll(async () => /^dispatch_file_streams_open 0$/m.test(await (await page.request.get("/metrics")).text()), {
      timeout: 30_000,
    })
    .toBe(true);
  const log = readFileSync(stack.logFile).subarray(logFrom).toString("utf8");
  assertNoUncaught(log, "the web server or a worker, during the walk");
});
