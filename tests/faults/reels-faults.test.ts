import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers";
import { startTestStack, type TestStack } from "./stack";

/** The web server (which hosts the sandbox) killed and restarted in the middle of publications. */
const ACCOUNT = "17841400000000303";
const TOKEN = "EAAGfaultsSANDBOXtoken0000000003";
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack("reels", {
    REEL_ACCOUNTS: `acme:${ACCOUNT}:${TOKEN}`,
    REEL_POLL_INTERVAL_MS: "300",
    REEL_POLL_ATTEMPTS: "200",
    SANDBOX_PROCESSING_MS: "3000",
  });
});

afterAll(async () => {
  await stack?.stop();
});

const publication = async (id: string) => (await stack.fetchAs("acme", `/api/reels/${id}`)).json();

describe("reel publishing when the web server dies", () => {
  it.each(["CREATING", "PROCESSING", "PROCESSING"])("ends PUBLISHED exactly once when the web server is killed while %s", async (when) => {
    const caption = `fault ${when} ${Date.now()}`;
    const created = await stack.fetchAs("acme", "/api/reels", {
      method: "POST",
      body: JSON.stringify({ account_id: ACCOUNT, video_url: `${stack.url}/samples/reel-valid.mp4`, caption }),
    });
    expect(created.status).toBe(202);
    const { publication_id } = await created.json();
    await waitFor(async () => {
      const p = await publication(publication_id);
      return when === "CREATING" ? ["CREATING", "PROCESSING"].includes(p.status) : p.status === "PROCESSING" && p.polls.length >= 1;
    }, { timeoutMs: 60_000, intervalMs: 20, what: `the publication to be ${when}` });

    await stack.web.kill("SIGKILL");
    stack.web.restart();
    await waitFor(async () => (await fetch(`${stack.url}/api/health`).catch(() => undefined))?.ok, { timeoutMs: 60_000, intervalMs: 200, what: "the web server back" });

    const final = await waitFor(async () => {
      const p = await publication(publication_id).catch(() => undefined);
      return p && ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(p.status) ? p : undefined;
    }, { timeoutMs: 120_000, intervalMs: 250, what: "the publication to finish" });
    expect(final.status).toBe("PUBLISHED");
    expect(final.post_id).toBeTruthy();
    const posts = await (await fetch(`${stack.url}/graph/v21.0/${ACCOUNT}/media?fields=id,caption&limit=100&access_token=${TOKEN}`)).json();
    expect(posts.data.filter((p: { caption?: string }) => p.caption === caption)).toHaveLength(1);
  });
});
