import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { formatMs, formatNumber } from "@/components/format";
import { REEL_INSIGHT_METRICS, type ReelInsightsView } from "@/lib/graph/insights-metrics";
import { expect, screenshot, signIn, test } from "./fixtures";

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

/** Axe's findings on the page as it is now, in light and in dark. */
async function expectAxeClean(page: Page, what: string) {
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    const { violations } = await new AxeBuilder({ page }).analyze();
    expect(
      violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
      `${what} (${colorScheme})`,
    ).toEqual([]);
  }
}

const shown = (metric: string, value: number | null) =>
  metric === "ig_reels_avg_watch_time" ? formatMs(value) : formatNumber(value);

test("a reel's insights appear on its card after publishing, and in its account's table, sortable by a metric", async ({
  page,
  stack,
}) => {
  const caption = `insights e2e ${Date.now()}`;
  const accounts = (await (await page.request.get("/api/accounts")).json()) as { data: { account_id: string }[] };
  const accountId = accounts.data[0].account_id;
  const response = await page.request.post("/api/reels", {
    data: { account_id: accountId, video_url: `${stack.url}/samples/reel-valid.mp4`, caption },
  });
  expect(response.status()).toBe(202);
  const { publication_id: id } = (await response.json()) as { publication_id: string };

  await page.goto(`/dashboard/reels/${id}`);
  await expect(page.getByTestId("publication-status")).toHaveText("PUBLISHED", { timeout: 60_000 });
  const card = page.getByTestId("reel-insights");
  await expect(card.getByTestId("insight-values")).toBeVisible();
  // Within 15 minutes the API answers the reading the card showed, without asking Graph again.
  const insights = (await (await page.request.get(`/api/reels/${id}/insights`)).json()) as ReelInsightsView;
  expect(insights.status).toBe("available");
  for (const metric of REEL_INSIGHT_METRICS)
    await expect(card.locator(`[data-metric="${metric}"]`)).toHaveText(shown(metric, insights.metrics![metric]));
  await screenshot(page, "reel-insights");
  await expectAxeClean(page, "the published reel's page");

  await page.goto("/dashboard/accounts");
  const table = page.getByTestId("account-insights-table");
  const row = table.getByTestId("account-insights-row").filter({ hasText: caption });
  await expect(row).toHaveCount(1);
  await expect(row.locator('[data-metric="views"]')).toHaveText(shown("views", insights.metrics!.views));
  await expect(page.getByRole("status").filter({ hasText: /Loading/ })).toHaveCount(0);
  await expectAxeClean(page, "the Accounts page");

  const views = table.getByRole("columnheader", { name: /Views/ });
  await views.getByRole("button").click();
  await expect(views).toHaveAttribute("aria-sort", "descending");
  const read = async () =>
    (await table.locator('[data-testid="account-insights-row"] [data-metric="views"]').allTextContents()).map((t) =>
      t === "not yet" ? -1 : Number(t.replace(/,/g, "")),
    );
  await expect
    .poll(async () => {
      const values = await read();
      return values.every((v, i) => i === 0 || values[i - 1] >= v);
    })
    .toBe(true);
  await views.getByRole("button").click();
  await expect(views).toHaveAttribute("aria-sort", "ascending");
  await expect
    .poll(async () => {
      const values = (await read()).filter((v) => v >= 0);
      return values.every((v, i) => i === 0 || values[i - 1] <= v);
    })
    .toBe(true);
});
