import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { loginCallerFor } from "@/lib/accounts/meta-login/login-caller";
import {
  loginErrorAnswer,
  loginOutcomeRedirect,
  readLoginOutcome,
} from "@/lib/accounts/meta-login/login-outcome-redirect";
import { realRedisPerFile } from "./real-redis";

/**
 * Where a browser goes after Meta's login: dashboard pages whose addresses carry an id, never a
 * token or Meta's words; a refusal's message is read back only by the session it was kept for.
 */

const redis = realRedisPerFile();
const caller = loginCallerFor("tenant-a", "session-cookie-a");

/** Meta's words, as a forged error_description could make them. */
const FORGED = 'Instagram said: <a href="https://evil.example">Sign in here</a>';

async function refusedAt(): Promise<URL> {
  const response = await loginOutcomeRedirect(redis(), caller, {
    kind: "refused",
    title: "Not connected",
    detail: FORGED,
  });
  expect(response.status).toBe(303);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return new URL(response.headers.get("location")!, "http://dispatch.test");
}

describe("loginOutcomeRedirect", () => {
  it("connected: to the Accounts page at the account, with a fragment of its own", async () => {
    const response = await loginOutcomeRedirect(redis(), caller, {
      kind: "connected",
      accountId: "178",
      username: "a",
    });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/dashboard/accounts?connected=178#account-178");
  });

  it("several accounts: to the picker page with the choice's id only", async () => {
    const choiceId = "c".repeat(32);
    const response = await loginOutcomeRedirect(redis(), caller, {
      kind: "choose",
      choiceId,
      options: [{ accountId: "178", username: "a", pageName: "A's Page" }],
    });
    expect(response.headers.get("location")).toBe(
      `/dashboard/accounts/connect/choose?choice=${choiceId}#account-choice`,
    );
  });

  it("refused: to the outcome page with a random id; the message stays server-side", async () => {
    const at = await refusedAt();
    expect(at.pathname).toBe("/dashboard/accounts/connect");
    expect([...at.searchParams.keys()]).toEqual(["outcome"]);
    expect(at.searchParams.get("outcome")).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(decodeURIComponent(at.href)).not.toMatch(/evil|Instagram|Sign in/);
    expect(await readLoginOutcome(redis(), at.searchParams.get("outcome"), caller)).toEqual({
      kind: "refused",
      title: "Not connected",
      detail: FORGED,
    });
    // Kept for reloads: read twice, the same.
    expect((await readLoginOutcome(redis(), at.searchParams.get("outcome"), caller)).detail).toBe(FORGED);
  });
});

describe("readLoginOutcome", () => {
  const NOTHING_TO_SHOW = { kind: "refused", title: "Nothing to show" };

  it("shows another session's or another tenant's message to no one else", async () => {
    const id = (await refusedAt()).searchParams.get("outcome");
    expect(await readLoginOutcome(redis(), id, loginCallerFor("tenant-a", "session-cookie-b"))).toMatchObject(
      NOTHING_TO_SHOW,
    );
    expect(await readLoginOutcome(redis(), id, loginCallerFor("tenant-b", "session-cookie-a"))).toMatchObject(
      NOTHING_TO_SHOW,
    );
    expect(await readLoginOutcome(redis(), id, undefined)).toMatchObject(NOTHING_TO_SHOW);
  });

  it.each([["A".repeat(32)], ["not an id"], [["x", "y"]], [undefined]])("has nothing for %j", async (outcome) => {
    expect(await readLoginOutcome(redis(), outcome, caller)).toMatchObject(NOTHING_TO_SHOW);
  });

  it("signed-out: says nothing was connected, to whoever signs in", async () => {
    expect(await readLoginOutcome(redis(), "signed-out", caller)).toMatchObject({
      title: "Nothing was connected",
      detail: expect.stringContaining("not signed in"),
    });
  });
});

describe("loginErrorAnswer", () => {
  it("signed out: to sign in, and from there to the page that says nothing was connected", () => {
    const response = loginErrorAnswer(new ApiError("unauthorized", "Sign in."));
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(
      "/sign-in?next=%2Fdashboard%2Faccounts%2Fconnect%3Foutcome%3Dsigned-out",
    );
  });

  it("any other error: problem+json", () => {
    const response = loginErrorAnswer(new ApiError("not-found", "No such thing."));
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
  });
});
