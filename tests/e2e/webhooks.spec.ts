import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import AxeBuilder from "@axe-core/playwright";
import { Webhook } from "standardwebhooks";
import { expect, screenshot, signIn, submitJob, test } from "./fixtures";

/** A webhook endpoint on 127.0.0.1 (the e2e stack sets ALLOW_PRIVATE_URLS, as a local setup would). */
let server: Server;
let url: string;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

test.beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dispatch-hooks`;
});

test.afterAll(() => {
  server?.close();
});

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("creates a webhook in the dashboard, shows its secret once, and logs the delivery after a job", async ({
  page,
}) => {
  await page.goto("/dashboard/webhooks");
  await page.getByRole("link", { name: "Webhooks" }).waitFor();
  await page.getByLabel("Endpoint URL").fill(url);
  // A person taps the event's row; the checkbox inside follows.
  await page.locator("label").filter({ hasText: "job.failed" }).click();
  await expect(page.getByRole("checkbox", { name: /job\.failed/ })).not.toBeChecked();
  await expect(page.getByRole("checkbox", { name: /job\.completed/ })).toBeChecked();
  await page.getByRole("button", { name: "Create webhook" }).click();

  const secret = (await page.getByTestId("webhook-secret").textContent()) ?? "";
  expect(secret).toMatch(/^whsec_/);
  const item = page.locator("li", { hasText: url }).first();
  await expect(item).toBeVisible();
  await expect(item.getByText("Enabled")).toBeVisible();
  await screenshot(page, "webhook-created");
  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("webhook-secret")).toHaveCount(0);

  await item.getByRole("button", { name: "Delivery log" }).click();
  await expect(item.getByText("No deliveries yet")).toBeVisible();

  const jobId = await submitJob(page, { prompt: "Webhooks tell the client", max_tokens: 8 });
  // Jobs of earlier specs that end after the webhook was made are delivered too: wait for this one.
  await expect.poll(() => received.some((r) => r.body.includes(jobId)), { timeout: 60_000 }).toBe(true);
  const delivery = received.find((r) => r.body.includes(jobId));
  const log = item.getByTestId("delivery-log");
  // This job's delivery: the log also lists those of jobs other specs left running.
  const attempts = log.locator(`li[data-delivery-id="${delivery!.headers["webhook-id"]}"]`);
  const entry = attempts.filter({ hasText: "Delivered" }).first();
  await expect(entry).toBeVisible({ timeout: 30_000 });
  await expect(entry).toContainText("job.completed");
  await expect(entry).toContainText("attempt 1");
  await expect(entry).toContainText("204");

  const payload = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as {
    type: string;
    data: { job_id: string };
  };
  expect(payload).toMatchObject({ type: "job.completed", data: { job_id: jobId } });
  await screenshot(page, "webhook-delivery-log");

  for (const colorScheme of ["light", "dark"] as const) {
    // A fresh load in each scheme: axe must not see colours mid-transition.
    await page.emulateMedia({ colorScheme });
    await page.reload();
    await item.getByRole("button", { name: "Delivery log" }).click();
    await expect(entry).toContainText("Delivered");
    const { violations } = await new AxeBuilder({ page }).analyze();
    expect(
      violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
      colorScheme,
    ).toEqual([]);
  }
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  // Every control is at least 44 px to tap on a phone (the event checkboxes' rows are the targets; their inputs are sr-only).
  const small = await page.locator("a, button, input, select, textarea, summary").evaluateAll((els) =>
    els
      .filter(
        (el) =>
          el.getBoundingClientRect().width > 0 &&
          getComputedStyle(el).display !== "inline" &&
          !el.closest(".sr-only") &&
          !el.classList.contains("sr-only"),
      )
      .filter((el) => el.getBoundingClientRect().height < 44)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim().slice(0, 30)}" ${Math.round(el.getBoundingClientRect().height)}px`,
      ),
  );
  expect(small).toEqual([]);
  await screenshot(page, "webhook-delivery-log-phone-dark");

  // Resend from the log: a second attempt of the same message.
  await entry.getByRole("button", { name: "Resend" }).click();
  await expect(attempts.first()).toContainText("attempt 2", { timeout: 30_000 });
  expect(received.filter((r) => r.headers["webhook-id"] === delivery!.headers["webhook-id"])).toHaveLength(2);

  await item.getByRole("button", { name: "Delete" }).click();
  await item.getByRole("button", { name: "Delete for good" }).click();
  await expect(page.locator("li", { hasText: url })).toHaveCount(0);
});
