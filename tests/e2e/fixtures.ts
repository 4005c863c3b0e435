import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, type Page } from "@playwright/test";
import { readStack, type StackInfo } from "./stack-file";

export { expect };

interface Fixtures {
  stack: StackInfo;
  /** Console messages a test expects (e.g. the browser's note on a deliberate 422). */
  allowedConsoleErrors: RegExp[];
  /** Every console error and uncaught page error; the test fails if any is left unexpected. */
  consoleErrors: string[];
}

export const test = base.extend<Fixtures>({
  stack: async ({}, provide) => provide(readStack()),
  baseURL: async ({}, provide) => provide(readStack().url),
  allowedConsoleErrors: [[], { option: true }],
  consoleErrors: [
    async ({ page, allowedConsoleErrors }, provide) => {
      const errors: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`console: ${message.text()} (${message.location().url})`);
      });
      page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
      await provide(errors);
      expect(errors.filter((e) => !allowedConsoleErrors.some((pattern) => pattern.test(e)))).toEqual([]);
    },
    { auto: true },
  ],
});

/** Signs the page's context in through the session API (the sign-in spec drives the form itself). */
export async function signIn(page: Page, apiKey = readStack().apiKey) {
  const response = await page.request.post("/api/session", { data: { api_key: apiKey } });
  expect(response.status()).toBe(200);
}

const SHOTS = "test-results/screenshots";

export async function screenshot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  // A full-page shot of a scrolled page draws the sticky header mid-page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** Submits a job through the API as the signed-in page's context and returns its id. */
export async function submitJob(page: Page, body: { prompt: string; max_tokens?: number; temperature?: number }) {
  const response = await page.request.post("/v1/jobs", {
    data: { tenant_id: readStack().tenantId, model_name: "local-ngram", ...body },
  });
  expect(response.status()).toBe(202);
  return ((await response.json()) as { job_id: string }).job_id;
}

/** A new account in the stack's Graph sandbox, through its control surface (this machine may call it): its id. */
export async function sandboxAccount(page: Page, username: string): Promise<string> {
  return (await sandboxAccountWithToken(page, username)).account_id;
}

/** The same with its token, to connect it with (POST /api/accounts) or to call the sandbox's Graph as the account. */
export async function sandboxAccountWithToken(page: Page, username: string) {
  const response = await page.request.post("/graph/_sandbox/accounts", { data: { username } });
  expect(response.status()).toBe(201);
  return (await response.json()) as { account_id: string; access_token: string };
}

/** Axe's findings on the page as it is now, in a form a failure message can show. */
export async function violations(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map((v) => ({
    rule: v.id,
    help: v.help,
    nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`),
  }));
}

/**
 * The page's controls shorter than 44 px, as "tag "text" height" lines. Links inside a sentence are
 * exempt (WCAG 2.5.8's inline exception); video controls are the browser's.
 */
export async function smallControls(page: Page): Promise<string[]> {
  return page.locator("a, button, input, select, textarea, summary, [role=switch]").evaluateAll((els) =>
    els
      .filter((el) => {
        const style = getComputedStyle(el);
        const box = el.getBoundingClientRect();
        return box.width > 0 && style.visibility !== "hidden" && style.display !== "inline" && !el.closest(".sr-only");
      })
      .filter((el) => el.getBoundingClientRect().height < 44)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim().slice(0, 30)}" ${Math.round(el.getBoundingClientRect().height)}px`,
      ),
  );
}
