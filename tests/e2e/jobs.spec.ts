import { expect, screenshot, signIn, submitJob, test } from "./fixtures";

/**
 * At temperature 0 local-ngram continues this prompt's cycle without reaching a natural end, so a
 * job runs its full max_tokens (at 20 tokens/s in the e2e stack) and is still running when looked at.
 */
const ENDLESS = "one two three four five six seven eight nine ten ".repeat(3).trim();

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("streams tokens before the job completes, then shows the counts; a reload shows the same text", async ({ page }) => {
  await page.goto("/dashboard/jobs");
  await page.getByLabel("Prompt").fill(ENDLESS);
  await page.getByLabel("Temperature").fill("0");
  await page.getByLabel("Max tokens").fill("60");
  await page.getByRole("button", { name: "Generate" }).click();
  await expect(page).toHaveURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);

  const status = page.getByTestId("job-status").first();
  const output = page.getByTestId("job-output");
  // Text while the job is still running: it arrives token by token, not at the end.
  await expect(status).toHaveText("RUNNING");
  await expect(output).not.toBeEmpty();
  expect(await status.textContent()).toBe("RUNNING");
  const early = (await output.textContent()) ?? "";
  await screenshot(page, "job-running");

  await expect(status).toHaveText("COMPLETED", { timeout: 30_000 });
  const full = (await output.textContent()) ?? "";
  expect(full.startsWith(early)).toBe(true);
  expect(full.length).toBeGreaterThan(early.length);
  await expect(page.getByTestId("stat-completion-tokens").locator("dd")).toHaveText(/^[1-9]\d*$/);
  await expect(page.getByTestId("stat-prompt-tokens").locator("dd")).toHaveText(/^[1-9]\d*$/);
  await expect(page.getByTestId("stat-ttft").locator("dd")).toHaveText(/\d+(\.\d+)? (ms|s)/);
  await expect(page.getByTestId("stat-tps").locator("dd")).toHaveText(/^\d+\.\d$/);
  await expect(page.getByTestId("stat-cost").locator("dd")).toHaveText("$0.00");
  await expect(page.getByRole("button", { name: "Cancel job" })).toHaveCount(0);
  await screenshot(page, "job-completed");

  // What the API stored is what was shown, with no duplicated or missing delta.
  const jobId = page.url().split("/").pop()!;
  const stored = (await (await page.request.get(`/jobs/${jobId}`)).json()) as { output: string };
  expect(full).toBe(stored.output);

  await page.reload();
  await expect(page.getByTestId("job-status").first()).toHaveText("COMPLETED");
  await expect(output).toHaveText(full, { useInnerText: false });

  // The recent-jobs list has it, with its badge, and opens it.
  await page.goto("/dashboard/jobs");
  const row = page.getByTestId("recent-jobs").locator(`a[href="/dashboard/jobs/${jobId}"]`);
  await expect(row.getByTestId("job-status")).toHaveText("COMPLETED");
  await screenshot(page, "jobs");
  await row.click();
  await expect(page).toHaveURL(new RegExp(`/dashboard/jobs/${jobId}$`));
  await expect(output).toHaveText(full);
});

test("resumes a dropped stream with Last-Event-ID and does not repeat text", async ({ page, stack }) => {
  const jobId = await submitJob(page, { prompt: ENDLESS, temperature: 0, max_tokens: 80 });
  const pattern = `**/jobs/${jobId}/stream*`;
  const requests: import("@playwright/test").Request[] = [];
  page.on("request", (request) => {
    if (request.url().includes(`/jobs/${jobId}/stream`)) requests.push(request);
  });
  await page.route(pattern, async (route) => {
    const response = await fetch(`${stack.url}/jobs/${jobId}/stream`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/^id: /gm) ?? []).length < 5) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    // The first five frames, then the end of the response, as a dropped connection looks to EventSource.
    const frames = text.split("\n\n").filter((f) => f.startsWith("id: ")).slice(0, 5);
    await route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `retry: 200\n\n${frames.join("\n\n")}\n\n` });
    // Only the first connection is cut; the reconnect goes straight to the server (Chromium drops
    // Last-Event-ID from an intercepted request).
    await page.unroute(pattern);
  });
  await page.goto(`/dashboard/jobs/${jobId}`);
  await expect(page.getByTestId("job-status").first()).toHaveText("COMPLETED", { timeout: 30_000 });

  expect(requests.length).toBeGreaterThanOrEqual(2);
  const resumed = requests[1];
  expect((await resumed.allHeaders())["last-event-id"]).toBe("5");
  const stored = (await (await page.request.get(`/jobs/${jobId}`)).json()) as { output: string };
  await expect(page.getByTestId("job-output")).toHaveText(stored.output, { useInnerText: false });
});

test("cancels a running job", async ({ page }) => {
  await page.goto("/dashboard/jobs");
  await page.getByLabel("Prompt").fill(ENDLESS);
  await page.getByLabel("Temperature").fill("0");
  await page.getByLabel("Max tokens").fill("5000");
  await page.getByRole("button", { name: "Generate" }).click();
  await expect(page).toHaveURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("job-status").first()).toHaveText("RUNNING");
  await expect(page.getByTestId("job-output")).not.toBeEmpty();

  await page.getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByTestId("job-status").first()).toHaveText("CANCELLED");
  await expect(page.getByRole("button", { name: "Cancel job" })).toHaveCount(0);
  const jobId = page.url().split("/").pop()!;
  const view = (await (await page.request.get(`/jobs/${jobId}`)).json()) as { status: string; usage: { completion_tokens: number } };
  expect(view.status).toBe("CANCELLED");
  expect(view.usage.completion_tokens).toBeLessThan(5000);
  await screenshot(page, "job-cancelled");
});

test.describe("validation", () => {
  test.use({ allowedConsoleErrors: [/status of 422/] });

  test("shows each problem+json error next to its field", async ({ page }) => {
    await page.goto("/dashboard/jobs");
    await page.getByLabel("Temperature").fill("3");
    await page.getByLabel("Max tokens").fill("0");
    await page.getByRole("button", { name: "Generate" }).click();

    const prompt = page.getByLabel("Prompt");
    await expect(prompt).toHaveAttribute("aria-invalid", "true");
    await expect(prompt).toHaveAccessibleDescription(/enter a prompt/i);
    await expect(page.getByLabel("Temperature")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Temperature")).toHaveAccessibleDescription(/2/);
    await expect(page.getByLabel("Max tokens")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Max tokens")).toHaveAccessibleDescription(/1/);
    await expect(page.getByLabel("Model")).not.toHaveAttribute("aria-invalid", "true");
    await expect(page).toHaveURL(/\/dashboard\/jobs$/);
    await screenshot(page, "jobs-validation");
  });
});
