import { expect, screenshot, signIn, test } from "./fixtures";

// A zone without daylight saving, so its name and offset are the same whenever this runs.
test.use({ timezoneId: "America/Phoenix" });

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

/** A datetime-local value `days` ahead at 09:30 in the page's zone, and the year it falls in. */
function ahead(days: number) {
  const at = new Date(Date.now() + days * 86_400_000);
  const day = at.toLocaleDateString("en-CA", { timeZone: "America/Phoenix" });
  return { local: `${day}T09:30`, iso: new Date(`${day}T09:30:00-07:00`).toISOString(), year: Number(day.slice(0, 4)) };
}

for (const viewport of [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
]) {
  test(`a scheduled reel names its zone, shows when it goes out, can be moved and re-captioned, then cancelled (${viewport.name})`, async ({
    page,
  }) => {
    await page.setViewportSize(viewport);
    await page.goto("/dashboard/reels");
    await expect(page.getByLabel("Account")).toHaveValue(/^\d+$/);
    await page.getByRole("button", { name: "Valid reel" }).click();
    // The video plays in the form before anything is sent.
    const preview = page.getByTestId("video-preview");
    await expect(preview).toBeVisible();
    await expect
      .poll(() => preview.evaluate((v: HTMLVideoElement) => v.readyState), { timeout: 15_000 })
      .toBeGreaterThanOrEqual(1);
    await page.getByLabel("Caption").fill("first line\nsecond line");
    await page.getByRole("switch", { name: "Schedule" }).click();
    await expect(page.getByTestId("schedule-zone")).toHaveText("In your time zone: America/Phoenix, UTC-7");
    const first = ahead(40);
    await page.getByLabel("Publish at").fill(first.local);
    await page.getByRole("button", { name: "Schedule reel" }).click();
    await expect(page).toHaveURL(/\/dashboard\/reels\/[0-9a-f-]{36}$/);
    const id = page.url().split("/").pop()!;
    const read = async () =>
      (await (await page.request.get(`/api/reels/${id}`)).json()) as {
        status: string;
        publish_at: string;
        caption: string;
      };
    expect((await read()).publish_at).toBe(first.iso);

    await expect(page.getByTestId("publication-status")).toHaveText("SCHEDULED");
    await expect(page.getByText("(America/Phoenix, UTC-7)")).toBeVisible();
    // Every time on the page in one local form: no raw ISO strings.
    await expect(page.locator("main")).not.toContainText(/\d{4}-\d{2}-\d{2}T\d{2}:/);
    await expect(page.locator(`time[datetime="${first.iso}"]`).first()).toHaveAttribute(
      "title",
      /America\/Phoenix, UTC-7/,
    );
    await screenshot(page, `reel-scheduled-${viewport.name}`);

    // The list says when it goes out, with the year only when it is not this year's.
    await page.goto("/dashboard/reels");
    const goesOut = page.locator(`[data-publication-id="${id}"]`).getByTestId("goes-out");
    await expect(goesOut).toContainText(/^Goes out \d{1,2} \w{3}( \d{4})?, 09:30$/);
    const hasYear = /\d{4}/.test((await goesOut.textContent()) ?? "");
    expect(hasYear).toBe(first.year !== new Date().getFullYear());

    // Move it and change its caption.
    await page.goto(`/dashboard/reels/${id}`);
    await page.getByRole("button", { name: "Reschedule or edit caption" }).click();
    const second = ahead(41);
    const edit = page.getByRole("form", { name: "Edit the scheduled reel" });
    await edit.getByLabel("Publish at").fill(second.local);
    await edit.getByLabel("Caption").fill("edited line\nand another");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await expect(edit).toHaveCount(0);
    await expect.poll(async () => (await read()).publish_at).toBe(second.iso);
    expect((await read()).caption).toBe("edited line\nand another");
    await expect(page.locator(`time[datetime="${second.iso}"]`).first()).toBeVisible();
    // The caption keeps its line break.
    const caption = page.getByText("edited line");
    expect(await caption.evaluate((el) => (el as HTMLElement).innerText)).toBe("edited line\nand another");

    // Cancel it, after a confirmation.
    await page.getByRole("button", { name: "Cancel publication" }).click();
    await page.getByRole("button", { name: "Yes, cancel it" }).click();
    await expect(page.getByTestId("publication-status")).toHaveText("CANCELLED");
    await expect(page.getByRole("button", { name: "Reschedule or edit caption" })).toHaveCount(0);
    expect((await read()).status).toBe("CANCELLED");
    await screenshot(page, `reel-cancelled-${viewport.name}`);
  });
}

test("an account shows its username next to its id", async ({ page }) => {
  const accounts = (await (await page.request.get("/api/accounts")).json()) as {
    data: { account_id: string; username: string | null }[];
  };
  const [account] = accounts.data;
  expect(account.username).toMatch(/\w/);
  await page.goto("/dashboard/reels");
  // The list asks Graph (the sandbox, in this same busy server) for each account it has not read
  // lately; a CI beside another took more than the default 20 s.
  await expect(page.getByLabel("Account").locator("option").first()).toHaveText(
    `@${account.username} · ${account.account_id} (sandbox)`,
    { timeout: 60_000 },
  );
});
