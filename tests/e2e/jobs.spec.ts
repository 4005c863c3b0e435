import { MAX_TOKENS, TEMPERATURE } from "@/lib/jobs/status";
import { expect, screenshot, signIn, submitJob, test } from "./fixtures";

/**
 * At temperature 0 local-ngram continues this prompt's cycle without reaching a natural end, so a
 * job runs its full max_tokens, at 20 tokens/s in the e2e stack: with thousands of them it is still
 * running whenever a test looks, however busy the machine, until the test cancels it.
 */
const ENDLESS = "one two three four five six seven eight nine ten ".repeat(3).trim();

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("a job that runs its full max_tokens shows the counts and why it ended; a reload shows the same text", async ({
  page,
}) => {
  await page.goto("/dashboard/jobs");
  await page.getByLabel("Prompt").fill(ENDLESS);
  await page.getByLabel("Temperature").fill("0");
  await page.getByLabel("Max tokens").fill("60");
  await page.getByRole("button", { name: "Generate" }).click();
  await expect(page).toHaveURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);

  // Text arriving while the job runs is the "while running" test's to see, with a job that cannot end
  // before it looks; this one only has to end, whenever a busy machine lets it.
  const status = page.getByTestId("job-status").first();
  const output = page.getByTestId("job-output");
  await expect(status).toHaveText("COMPLETED", { timeout: 60_000 });
  const jobId = page.url().split("/").pop()!;
  // What the API stored is what is shown, with no duplicated or missing delta.
  const full = ((await (await page.request.get(`/jobs/${jobId}`)).json()) as { output: string }).output;
  expect(full.length).toBeGreaterThan(0);
  await expect(output).toHaveText(full, { useInnerText: false });
  await expect(page.getByTestId("stat-completion-tokens").locator("dd")).toHaveText(/^[1-9]\d*$/);
  await expect(page.getByTestId("stat-prompt-tokens").locator("dd")).toHaveText(/^[1-9]\d*$/);
  await expect(page.getByTestId("stat-ttft").locator("dd")).toHaveText(/\d+(\.\d+)? (ms|s)/);
  await expect(page.getByTestId("stat-tps").locator("dd")).toHaveText(/^\d+\.\d$/);
  await expect(page.getByTestId("stat-cost").locator("dd")).toHaveText("$0.00");
  await expect(page.getByRole("button", { name: "Cancel job" })).toHaveCount(0);
  // It ran its full max_tokens: the page says so, from the job's finish_reason.
  await expect(page.getByTestId("finish-reason")).toHaveText("Reached max tokens");
  await expect(page.getByTestId("job-announcer")).toHaveText("Generation ended: Reached max tokens.");
  await screenshot(page, "job-completed");

  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy output" }).click();
  await expect(page.getByRole("button", { name: "Copied" })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(full);

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
  // A job that cannot end before the test has seen the reconnect deliver: on a busy machine an
  // 80-token job could finish before the page's first frames, and a finished job is shown from the
  // read model with no stream to resume.
  const jobId = await submitJob(page, { prompt: ENDLESS, temperature: 0, max_tokens: 5000 });
  // What each EventSource of the page receives, in order: a reconnect that the server answered from
  // the start instead of after Last-Event-ID would show as repeated ids on the same EventSource.
  await page.addInitScript(() => {
    const Native = window.EventSource;
    const sources: { url: string; ids: string[]; final: boolean }[] = [];
    Object.assign(window, { __eventSources: sources });
    window.EventSource = class extends Native {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        const seen = { url: String(url), ids: [] as string[], final: false };
        sources.push(seen);
        this.addEventListener("delta", (event) => {
          seen.ids.push((event as MessageEvent).lastEventId);
          if ((JSON.parse((event as MessageEvent).data) as { is_final?: boolean }).is_final) seen.final = true;
        });
      }
    };
  });
  let cutAfter: number | undefined;
  let reconnects = 0;
  await page.route(`**/jobs/${jobId}/stream*`, async (route) => {
    if (cutAfter !== undefined) {
      // Later connections go to the server unchanged (Chromium adds Last-Event-ID below interception).
      reconnects++;
      await route.continue();
      return;
    }
    cutAfter = 0;
    const response = await fetch(`${stack.url}/jobs/${jobId}/stream`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    });
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
    const frames = text
      .split("\n\n")
      .filter((f) => f.startsWith("id: "))
      .slice(0, 5);
    cutAfter = Number(/^id: (\d+)$/m.exec(frames[frames.length - 1])![1]);
    await route.fulfill({
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: `retry: 200\n\n${frames.join("\n\n")}\n\n`,
    });
  });
  await page.goto(`/dashboard/jobs/${jobId}`);
  type Seen = { url: string; ids: string[]; final: boolean }[];
  const readSources = () => page.evaluate(() => (window as unknown as { __eventSources: Seen }).__eventSources);
  // The reconnected stream delivers past the cut; then the test ends the job and waits for the final delta.
  await expect.poll(async () => (await readSources())[0]?.ids.length ?? 0, { timeout: 60_000 }).toBeGreaterThan(10);
  expect((await page.request.post(`/jobs/${jobId}/cancel`)).ok()).toBe(true);
  await expect.poll(async () => (await readSources()).some((source) => source.final), { timeout: 60_000 }).toBe(true);
  await expect(page.getByTestId("job-status").first()).toHaveText("CANCELLED", { timeout: 60_000 });
  const stored = (await (await page.request.get(`/jobs/${jobId}`)).json()) as { output: string };
  await expect(page.getByTestId("job-output")).toHaveText(stored.output, { useInnerText: false });

  // One EventSource, reconnected by the browser itself (not the page's ?after= fallback), whose
  // ids run on from the cut without a repeat or a gap.
  expect(reconnects).toBeGreaterThanOrEqual(1);
  const sources = await readSources();
  expect(sources.map((source) => source.url.includes("after="))).toEqual([false]);
  const ids = sources[0].ids.map(Number);
  expect(ids.length).toBeGreaterThan(5);
  expect(ids).toContain(cutAfter! + 1);
  expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
});

test("while running: live numbers, the text followed unless scrolled up, start and end announced once; then 'Cancelled at'", async ({
  page,
}) => {
  await page.goto("/dashboard/jobs");
  await page.getByLabel("Prompt").fill(ENDLESS);
  await page.getByLabel("Temperature").fill("0");
  await page.getByLabel("Max tokens").fill("5000");
  await page.getByRole("button", { name: "Generate" }).click();
  await expect(page).toHaveURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);
  const status = page.getByTestId("job-status").first();
  const output = page.getByTestId("job-output");
  // 5,000 tokens take over four minutes at this pace: the job runs until this test cancels it.
  await expect(status).toHaveText("RUNNING", { timeout: 60_000 });
  await expect(output).not.toBeEmpty();
  // Text arrives token by token while the job runs, each delta added to what was already shown.
  const early = (await output.textContent()) ?? "";
  await expect
    .poll(async () => ((await output.textContent()) ?? "").length, { timeout: 30_000 })
    .toBeGreaterThan(early.length);
  expect(((await output.textContent()) ?? "").startsWith(early)).toBe(true);
  await screenshot(page, "job-running");

  // The numbers move while it runs, not only at the end.
  const stat = (id: string) => page.getByTestId(id).locator("dd");
  await expect(stat("stat-tps")).toHaveText(/^~\d+\.\d$/);
  await expect(stat("stat-completion-tokens")).toHaveText(/^~[1-9]/);
  await expect(stat("stat-cost")).toHaveText("~$0.00");
  const elapsed = await stat("stat-elapsed").textContent();
  await expect(stat("stat-elapsed")).not.toHaveText(elapsed!);
  expect(await status.textContent()).toBe("RUNNING");

  // Screen readers hear "Generating…" once, not every token.
  await expect(output).not.toHaveAttribute("aria-live");
  await expect(page.getByTestId("job-announcer")).toHaveText("Generating…");
  await screenshot(page, "job-running-live");

  // A short box, so the growing text overflows it soon: it stays scrolled to the end…
  await output.evaluate((el) => {
    Object.assign(el.style, { minHeight: "0", maxHeight: "48px" });
    el.scrollTop = el.scrollHeight;
  });
  const geometry = () =>
    output.evaluate((el) => ({
      top: el.scrollTop,
      gap: el.scrollHeight - el.scrollTop - el.clientHeight,
      overflow: el.scrollHeight - el.clientHeight,
    }));
  await expect.poll(async () => (await geometry()).overflow, { timeout: 20_000 }).toBeGreaterThan(60);
  await expect.poll(async () => (await geometry()).gap).toBeLessThan(24);
  // …until the reader scrolls up; then new text leaves the view where the reader put it.
  await output.evaluate((el) => el.scrollTo({ top: 0 }));
  const length = ((await output.textContent()) ?? "").length;
  await expect.poll(async () => ((await output.textContent()) ?? "").length).toBeGreaterThan(length + 20);
  expect((await geometry()).top).toBe(0);

  await page.getByRole("button", { name: "Cancel job" }).click();
  await expect(status).toHaveText("CANCELLED");
  await expect(page.getByRole("button", { name: "Cancel job" })).toHaveCount(0);
  await expect(page.getByText(/^Cancelled at \d{2}:\d{2}:\d{2}$/)).toBeVisible();
  await expect(page.getByText(/^Finished/)).toHaveCount(0);
  await expect(page.getByTestId("job-announcer")).toHaveText(/^Generation ended: cancelled/i);
  const jobId = page.url().split("/").pop()!;
  const view = (await (await page.request.get(`/jobs/${jobId}`)).json()) as {
    status: string;
    usage: { completion_tokens: number };
  };
  expect(view.status).toBe("CANCELLED");
  expect(view.usage.completion_tokens).toBeLessThan(5000);
  await screenshot(page, "job-cancelled");
});

for (const viewport of [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
]) {
  test(`the form shows its defaults, refuses a blank prompt, sends once on a double click, remembers, and runs a job again (${viewport.name})`, async ({
    page,
  }) => {
    await page.setViewportSize(viewport);
    await page.goto("/dashboard/jobs");
    const prompt = page.getByLabel("Prompt");
    const maxTokens = page.getByLabel("Max tokens");
    // One default, the one the API applies, shown in the field.
    await expect(maxTokens).toHaveValue(String(MAX_TOKENS.default));
    await expect(page.getByLabel("Temperature")).toHaveValue(String(TEMPERATURE.default));
    await expect(page.getByLabel("Temperature")).toHaveAttribute("max", String(TEMPERATURE.max));

    const posts: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/v1/jobs")
        posts.push(request.postData() ?? "");
    });
    await prompt.fill("   ");
    await page.getByRole("button", { name: "Generate" }).click();
    await expect(prompt).toHaveAttribute("aria-invalid", "true");
    await expect(prompt).toHaveAccessibleDescription("Enter a prompt: only spaces is no prompt");
    expect(posts).toHaveLength(0);

    const text = `Run it again ${viewport.name} ${Date.now()}`;
    await prompt.fill(text);
    await page.getByLabel("Temperature").fill("0.7");
    await maxTokens.fill("12");
    await page.getByRole("button", { name: "Generate" }).dblclick();
    await expect(page).toHaveURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);
    const jobId = page.url().split("/").pop()!;
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0])).toMatchObject({ job_id: jobId, prompt: text, temperature: 0.7, max_tokens: 12 });
    const listed = (await (await page.request.get("/v1/jobs?limit=100")).json()) as { data: { prompt: string }[] };
    expect(listed.data.filter((j) => j.prompt === text)).toHaveLength(1);

    // Back on the form, the last prompt and settings are still there.
    await page.goBack();
    await expect(page).toHaveURL(/\/dashboard\/jobs$/);
    await expect(prompt).toHaveValue(text);
    await expect(maxTokens).toHaveValue("12");
    await prompt.fill("Something else entirely");
    await page.reload();
    await expect(prompt).toHaveValue("Something else entirely");

    // "Run again" brings the job's own prompt and settings back into the form.
    await page.goto(`/dashboard/jobs/${jobId}`);
    await expect(page.getByTestId("job-status").first()).toHaveText("COMPLETED", { timeout: 60_000 });
    await page.getByRole("button", { name: "Run again" }).click();
    await expect(page).toHaveURL(/\/dashboard\/jobs$/);
    await expect(prompt).toHaveValue(text);
    await expect(page.getByLabel("Temperature")).toHaveValue("0.7");
    await expect(maxTokens).toHaveValue("12");
    await screenshot(page, `jobs-run-again-${viewport.name}`);
  });
}

test.describe("validation", () => {
  test.use({ allowedConsoleErrors: [/status of 422/] });

  test("shows each problem+json error next to its field", async ({ page }) => {
    await page.goto("/dashboard/jobs");
    await page.getByLabel("Temperature").fill("3");
    await page.getByLabel("Max tokens").fill("0");
    await page.getByRole("button", { name: "Generate" }).click();

    const prompt = page.getByLabel("Prompt");
    await expect(prompt).toHaveAttribute("aria-invalid", "true");
    await expect(prompt).toHaveAccessibleDescription("Enter a prompt");
    // The form checks only the blank prompt itself; the numbers are the API's to judge.
    await prompt.fill("Validation in people's words");
    await page.getByRole("button", { name: "Generate" }).click();
    await expect(prompt).not.toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Temperature")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Temperature")).toHaveAccessibleDescription("Temperature is between 0 and 2");
    await expect(page.getByLabel("Max tokens")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Max tokens")).toHaveAccessibleDescription(/Max tokens/);
    await page.getByLabel("Max tokens").fill("1.5");
    await page.getByRole("button", { name: "Generate" }).click();
    await expect(page.getByLabel("Max tokens")).toHaveAccessibleDescription("Max tokens must be a whole number");
    await expect(page.getByLabel("Model")).not.toHaveAttribute("aria-invalid", "true");
    await expect(page).toHaveURL(/\/dashboard\/jobs$/);
    await screenshot(page, "jobs-validation");
  });
});
