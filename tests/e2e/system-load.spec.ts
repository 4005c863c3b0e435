import { expect, screenshot, signIn, submitJob, test } from "./fixtures";

const VIEWPORTS = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
  { name: "desktop-dark", width: 1280, height: 900, dark: true },
];

test("the system page shows each worker's running jobs, free slots and windows, and the tenant's running and waiting", async ({
  page,
}) => {
  // 64 submissions, four looks at the page and 64 cancels: a CI beside another, with other work on
  // the machine, took more than 90 s.
  test.setTimeout(240_000);
  await signIn(page);
  // More jobs than the tenant may run at once (TENANT_CONCURRENCY, 16 by default): some run, the rest
  // wait. At 20 tokens/s none can finish in this test's life, so "running" and "waiting" hold while
  // the page is looked at, however busy the machine; the test cancels them when it ends.
  const jobIds = await Promise.all(
    Array.from({ length: 64 }, (_, i) =>
      submitJob(page, { prompt: `The system page shows load ${i}`, max_tokens: 5000 }),
    ),
  );
  try {
    await page.goto("/dashboard/system");
    const tenant = page.getByTestId("tenant-load-summary");
    await expect(tenant).toHaveText(/^[1-9]\d* running of \d+ allowed · [1-9]\d* waiting$/);

    const generation = page.getByTestId("worker-load").first().locator('[data-consumer="generation"]');
    await expect(generation.getByTestId("consumer-running")).toHaveText(/^[1-9]\d* running \/ \d+$/);
    await expect(generation).toContainText(/\d+ free slots? · partitions \d/);
    await expect(generation.getByTestId("windows").locator("tbody tr").first()).toBeVisible();
    await expect(page.getByTestId("worker-load").first().locator('[data-consumer="reels"]')).toBeVisible();

    for (const viewport of VIEWPORTS) {
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      await page.emulateMedia({ colorScheme: viewport.dark ? "dark" : "light" });
      await expect(generation.getByTestId("consumer-running")).toHaveText(/^[1-9]/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await screenshot(page, `system-load-${viewport.name}`);
    }
  } finally {
    // Later specs' jobs of this tenant would otherwise wait behind these.
    const cancels = await Promise.all(jobIds.map((id) => page.request.post(`/jobs/${id}/cancel`)));
    for (const cancel of cancels) expect(cancel.status()).toBeLessThan(500);
  }
});

test("the system page says when the tenant's load could not be read, and marks a full window as paused", async ({
  page,
}) => {
  await signIn(page);
  // Neither happens on a healthy stack with small windows: the real answer is altered on its way to the page.
  await page.route("**/api/system", async (route) => {
    const response = await route.fetch();
    const body = (await response.json()) as {
      tenant: unknown;
      health: {
        workers: {
          seen: {
            consumers: Record<string, { windows: { partition: number; buffered: number; paused: boolean }[] }>;
          }[];
        };
      };
    };
    body.tenant = null;
    const generation = body.health.workers.seen[0]?.consumers.generation;
    if (generation)
      generation.windows = [
        {
          ...(generation.windows[0] ?? { partition: 0, running: 0, watermark: "9000", committed: "9000" }),
          buffered: 10_000,
          paused: true,
        },
      ];
    await route.fulfill({ response, json: body });
  });
  await page.goto("/dashboard/system");
  await expect(page.getByTestId("tenant-load")).toContainText("Your tenant's load could not be read");
  const paused = page
    .getByTestId("worker-load")
    .first()
    .locator('[data-consumer="generation"]')
    .getByTestId("window-paused");
  await expect(paused).toHaveText("Paused");
  await screenshot(page, "system-load-unread-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await screenshot(page, "system-load-unread-phone");
});
