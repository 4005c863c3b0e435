import AxeBuilder from "@axe-core/playwright";
import { expect, screenshot, signIn, test } from "./fixtures";

test("the API reference page renders the OpenAPI document, loading nothing from another origin", async ({
  page,
  stack,
}) => {
  const foreign: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (!["data:", "blob:"].includes(url.protocol) && url.origin !== new URL(stack.url).origin)
      foreign.push(request.url());
  });
  await signIn(page);
  await page.goto("/dashboard/jobs");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API" }).click();
  await expect(page).toHaveURL(/\/dashboard\/api$/);
  await expect(page.getByRole("heading", { level: 1, name: "API reference" })).toBeVisible();
  const reference = page.getByTestId("api-reference");
  await expect(reference.getByText("Submit a generation job").first()).toBeVisible({ timeout: 30_000 });
  await expect(reference.getByText("Stream a job's tokens").first()).toBeVisible();
  await screenshot(page, "api-reference");
  await page.screenshot({ path: "test-results/screenshots/api-reference-viewport.png" });
  expect(foreign).toEqual([]);
  // The page's own parts pass axe; Scalar's rendering is its own (its contrast and nested <main> are known to fail).
  const { violations } = await new AxeBuilder({ page }).exclude('[data-testid="api-reference"]').analyze();
  expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
});
