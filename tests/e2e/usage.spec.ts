import type { Page } from "@playwright/test";
import { isFinalJob } from "@/lib/jobs/status";
import { isSettledPublication } from "@/lib/reels/status";
import type { UsagePage } from "@/lib/usage/usage-report";
import { expect, sandboxAccountWithToken, screenshot, signIn, submitJob, test, violations } from "./fixtures";

/** The tenant's usage as GET /v1/usage tells it: the built-in model's tokens, jobs by outcome, one account's reels. */
async function usageTotals(page: Page, account: string) {
  const from = Math.floor(Date.now() / 1000) - 2 * 86_400;
  const read = async (query: string) =>
    (await (await page.request.get(`/v1/usage?from=${from}&${query}`)).json()) as UsagePage;
  const results = (p: UsagePage) => p.data.flatMap((b) => b.results);
  const totals = { tokens: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0, published: 0, failed: 0 };
  for (const r of results(await read("bucket=hour&group_by=model")))
    if (r.object === "usage.jobs.result" && r.model === "local-ngram")
      totals.tokens += r.input_tokens + r.output_tokens;
  for (const r of results(await read("bucket=hour&group_by=status")))
    if (r.object === "usage.jobs.result") totals[r.status as "COMPLETED" | "FAILED" | "CANCELLED"] += r.jobs;
  for (const r of results(await read("bucket=day&group_by=account")))
    // Other specs connect more accounts to this tenant; the page's column is one account's.
    if (r.object === "usage.reels.result" && r.account_id === account) {
      totals.published += r.published;
      totals.failed += r.failed;
    }
  return totals;
}

/** Nothing of this tenant is still running (an earlier spec's job or reel), so the figures hold still. */
async function settled(page: Page) {
  await expect
    .poll(
      async () => {
        const jobs = (await (await page.request.get("/v1/jobs?limit=100")).json()) as { data: { status: string }[] };
        const reels = (await (await page.request.get("/api/reels?limit=100")).json()) as { data: { status: string }[] };
        return (
          jobs.data.every((j) => isFinalJob(j.status)) &&
          reels.data.every((r) => isSettledPublication(r.status) || r.status === "SCHEDULED")
        );
      },
      // An earlier spec's longest job (2,048 tokens at the stack's 20 a second) takes 100 s.
      { timeout: 200_000 },
    )
    .toBe(true);
}

/** A chart's table view, opened, as rows of header → cell text. */
async function tableOf(page: Page, chart: string): Promise<Record<string, string>[]> {
  const card = page.getByTestId(`usage-${chart}`);
  const details = card.locator("details");
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await card.getByText("Table view").click();
  return card.locator("table").evaluate((table) => {
    const headers = [...table.querySelectorAll("thead th")].map((th) => th.textContent ?? "");
    return [...table.querySelectorAll("tbody tr")].map((tr) =>
      Object.fromEntries([...tr.children].map((cell, i) => [headers[i], cell.textContent ?? ""])),
    );
  });
}

const amount = (text: string | undefined) => Number((text ?? "").replace(/[^0-9.]/g, ""));
const column = (rows: Record<string, string>[], name: string) => rows.reduce((sum, row) => sum + amount(row[name]), 0);

async function firstAccount(page: Page): Promise<{ id: string; name: string }> {
  const accounts = (await (await page.request.get("/api/accounts")).json()) as {
    data: { account_id: string; username: string | null }[];
  };
  const [first] = accounts.data;
  return { id: first.account_id, name: first.username ? `@${first.username}` : first.account_id };
}

async function publish(page: Page, account: string, videoUrl: string): Promise<void> {
  const response = await page.request.post("/api/reels", {
    data: { account_id: account, video_url: videoUrl, caption: "Usage" },
  });
  expect(response.status()).toBe(202);
  const { publication_id: id } = (await response.json()) as { publication_id: string };
  await expect
    .poll(async () => ((await (await page.request.get(`/api/reels/${id}`)).json()) as { status: string }).status, {
      timeout: 60_000,
    })
    .toMatch(/^(PUBLISHED|FAILED)$/);
}

/** Publishes through Dispatch to that account and waits for it to settle: its status. */
async function publishTo(page: Page, accountId: string, videoUrl: string): Promise<string> {
  const response = await page.request.post("/api/reels", {
    data: { account_id: accountId, video_url: videoUrl, caption: "Quota" },
  });
  expect(response.status()).toBe(202);
  const { publication_id: id } = (await response.json()) as { publication_id: string };
  let status = "";
  await expect
    .poll(
      async () => (status = ((await (await page.request.get(`/api/reels/${id}`)).json()) as { status: string }).status),
      {
        timeout: 90_000,
      },
    )
    .toMatch(/^(PUBLISHED|FAILED)$/);
  return status;
}

/**
 * A reel published straight through the sandbox's Graph API with the account's token, as the
 * Instagram app or another tool would: Graph counts it, Dispatch never hears of it.
 */
async function publishOutsideDispatch(
  page: Page,
  account: { account_id: string; access_token: string },
  videoUrl: string,
) {
  const graph = "/graph/v21.0";
  const token = { access_token: account.access_token };
  const created = await page.request.post(`${graph}/${account.account_id}/media`, {
    form: { ...token, media_type: "REELS", video_url: videoUrl },
  });
  expect(created.status()).toBe(200);
  const { id } = (await created.json()) as { id: string };
  await expect
    .poll(
      async () =>
        (
          (await (
            await page.request.get(`${graph}/${id}`, { params: { ...token, fields: "status_code" } })
          ).json()) as {
            status_code: string;
          }
        ).status_code,
      { timeout: 60_000 },
    )
    .toBe("FINISHED");
  const published = await page.request.post(`${graph}/${account.account_id}/media_publish`, {
    form: { ...token, creation_id: id },
  });
  expect(published.status()).toBe(200);
}

test.describe("the Usage page", () => {
  test("draws tokens, outcomes, speeds and reels from known jobs and reels, as its table views read", async ({
    page,
    stack,
  }) => {
    test.setTimeout(420_000);
    await signIn(page);
    await settled(page);
    const account = await firstAccount(page);
    const before = await usageTotals(page, account.id);

    const ids = await Promise.all(
      [5, 7, 9].map((max_tokens) =>
        submitJob(page, { prompt: `Usage, ${max_tokens} tokens`, max_tokens, temperature: 0 }),
      ),
    );
    const cancelled = await submitJob(page, { prompt: "Usage, cancelled", max_tokens: 2000 });
    expect((await page.request.post(`/jobs/${cancelled}/cancel`)).status()).toBe(200);
    await publish(page, account.id, `${stack.url}/samples/reel-valid.mp4`);
    await publish(page, account.id, `${stack.url}/samples/reel-too-short.mp4`);
    const jobs = await Promise.all(
      [...ids, cancelled].map(async (id) => {
        let job: { status: string; usage: { total_tokens: number } | null } | undefined;
        await expect
          .poll(async () => isFinalJob((job = await (await page.request.get(`/jobs/${id}`)).json()).status), {
            timeout: 60_000,
          })
          .toBe(true);
        return job!;
      }),
    );
    expect(jobs.map((j) => j.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "CANCELLED"]);
    const tokens = jobs.reduce((sum, j) => sum + (j.usage?.total_tokens ?? 0), 0);
    expect(tokens).toBeGreaterThan(21);

    // A job cancelled while queued is counted when a worker passes its command: wait for it.
    let after = before;
    await expect
      .poll(
        async () => {
          after = await usageTotals(page, account.id);
          return [after.tokens - before.tokens, after.COMPLETED - before.COMPLETED, after.CANCELLED - before.CANCELLED];
        },
        { timeout: 60_000 },
      )
      .toEqual([tokens, 3, 1]);
    expect([after.published - before.published, after.failed - before.failed]).toEqual([1, 1]);

    await page.goto("/dashboard/usage");
    await expect(page.getByRole("heading", { level: 1, name: "Usage" })).toBeVisible();
    await expect(page.getByRole("link", { name: "24 h" })).toHaveAttribute("aria-current", "page");
    await expect(page.getByTestId("usage-tokens").locator(".recharts-bar-rectangle").first()).toBeVisible();

    expect(column(await tableOf(page, "tokens"), "local-ngram")).toBe(after.tokens);
    const outcomes = await tableOf(page, "outcomes");
    expect([column(outcomes, "completed"), column(outcomes, "failed"), column(outcomes, "cancelled")]).toEqual([
      after.COMPLETED,
      after.FAILED,
      after.CANCELLED,
    ]);
    const reels = await tableOf(page, "reels");
    // The page names the account by its @username.
    expect([column(reels, `${account.name} published`), column(reels, `${account.name} failed`)]).toEqual([
      after.published,
      after.failed,
    ]);
    for (const [chart, unit] of [
      ["ttft", / ms$/],
      ["tps", /\/s$/],
    ] as const) {
      const [row] = await tableOf(page, chart);
      expect(row.Model).toBe("local-ngram");
      expect(row.p50).toMatch(unit);
      expect(amount(row.p95)).toBeGreaterThanOrEqual(amount(row.p50));
    }
    // The built-in model has no price here: the cost chart says what it will show instead.
    await expect(page.getByTestId("usage-cost")).toContainText("No cost in this range");

    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await violations(page), `/dashboard/usage (${colorScheme})`).toEqual([]);
    }
  });

  test("says what each chart will show when the range has nothing, and why a range it cannot show is replaced", async ({
    page,
  }) => {
    await signIn(page);
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`/dashboard/usage?from=${day(100)}&to=${day(90)}`);
    for (const [chart, text] of [
      ["tokens", "Each model's tokens will appear here"],
      ["outcomes", "Completed, failed and cancelled jobs will appear here"],
      ["reels", "published and failed reels will appear here"],
      ["ttft", "time to first token will appear here"],
    ])
      await expect(page.getByTestId(`usage-${chart}`)).toContainText(text);
    await expect(page.getByLabel("From")).toHaveValue(day(100));

    await page.goto(`/dashboard/usage?from=${day(20)}&to=${day(30)}`);
    await expect(page.getByRole("status").filter({ hasText: "Showing the last 24 hours instead" })).toContainText(
      "must be after from",
    );
  });

  test("fits a phone, with axe clean in light and dark and every control big enough to tap", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page);
    // A job of its own, counted, so the charts have something to draw when this test runs alone.
    const jobs = async () => {
      const from = Math.floor(Date.now() / 1000) - 86_400;
      const usage = (await (await page.request.get(`/v1/usage?from=${from}&group_by=status`)).json()) as UsagePage;
      return usage.data
        .flatMap((b) => b.results)
        .reduce((n, r) => n + (r.object === "usage.jobs.result" ? r.jobs : 0), 0);
    };
    const before = await jobs();
    await submitJob(page, { prompt: "Usage on a phone", max_tokens: 5, temperature: 0 });
    await expect.poll(jobs, { timeout: 60_000 }).toBeGreaterThan(before);
    await page.goto("/dashboard/usage?range=7d");
    await expect(page.getByRole("link", { name: "7 d" })).toHaveAttribute("aria-current", "page");
    // The charts are drawn once the browser has measured them: only then can one overflow the page.
    await expect(page.getByTestId("usage-outcomes").locator(".recharts-bar-rectangle").first()).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await violations(page), `phone (${colorScheme})`).toEqual([]);
    }
    const small = await page
      .locator("main a, main button, main input, main summary")
      .evaluateAll((els) =>
        els.filter((el) => el.getBoundingClientRect().height < 44).map((el) => el.outerHTML.slice(0, 80)),
      );
    expect(small).toEqual([]);
  });

  test("draws an account's reels in the moving 24 h against its limit, as its table view reads, axe clean on a desktop and a phone", async ({
    page,
    stack,
  }) => {
    test.setTimeout(300_000);
    await signIn(page);
    const account = await sandboxAccountWithToken(page, `e2e_quota_${Date.now()}`);
    // The limit first: connecting reads the quota, and Dispatch keeps what it read for 30 s.
    const quota = await page.request.put(`/graph/_sandbox/accounts/${account.account_id}/quota`, {
      data: { quota_total: 5 },
    });
    expect(quota.status()).toBe(200);
    const { account_id, access_token } = account;
    expect((await page.request.post("/api/accounts", { data: { account_id, access_token } })).status()).toBe(201);
    const card = page.getByTestId(`usage-quota-${account.account_id}`);

    await page.goto("/dashboard/usage");
    await expect(card).toContainText("Nothing published through Dispatch in the last 24 h");
    await expect(card).toContainText("against its limit of 5");

    // One post Graph counts and Dispatch does not know of, then two reels through Dispatch and one that fails.
    await publishOutsideDispatch(page, account, `${stack.url}/samples/reel-valid.mp4`);
    const statuses = await Promise.all(
      ["reel-valid.mp4", "reel-valid.mp4", "reel-too-short.mp4"].map((sample) =>
        publishTo(page, account.account_id, `${stack.url}/samples/${sample}`),
      ),
    );
    expect(statuses).toEqual(["PUBLISHED", "PUBLISHED", "FAILED"]);

    await page.goto("/dashboard/usage?range=7d");
    await expect(card.locator(".recharts-line-curve")).toBeVisible();
    // A horizontal line has no height, which Playwright calls hidden: its label is what shows.
    await expect(card.locator(".recharts-reference-line-line")).toHaveCount(1);
    await expect(card.getByText("Limit 5")).toBeVisible();
    // Graph's own count has the post made outside Dispatch; the line has only Dispatch's two.
    await expect(card).toContainText("Graph counts 3 of 5 posts in the moving window now");
    const rows = await tableOf(page, `quota-${account.account_id}`);
    const published = rows.map((row) => amount(row["Published through Dispatch"]));
    expect(rows.at(-1)?.["Time (UTC)"]).toMatch(/^Now, \d{1,2} [A-Z][a-z]{2} \d{2}:\d{2}$/);
    expect(published.at(-1)).toBe(2);
    // Every hour of the last day, then now; a new account's count only grows within its first day.
    expect([24, 25]).toContain(rows.length);
    expect(published).toEqual([...published].sort((a, b) => a - b));
    expect(rows.every((row) => row.Limit === "5")).toBe(true);
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await violations(page), `/dashboard/usage with a quota chart (${colorScheme})`).toEqual([]);
    }
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "usage-quota");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(card.locator(".recharts-line-curve")).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await violations(page), `phone, with a quota chart (${colorScheme})`).toEqual([]);
    }
  });
});
