import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicationView } from "@/lib/reels/publication";
import { ROOT, waitFor } from "../helpers";
import { startTestStack, submitJob, type TestStack } from "../stack";

/**
 * Reels, accounts and uploads answer at /v1 as at /api (deprecated, kept), through the built web
 * server `npm start` runs, so Next's routing of the /v1 files is part of what is tested: each /v1
 * call answers as its /api twin (status, body, content type), and the Location an answer carries
 * stays in the namespace the request came in on. The job's home is /v1/jobs/{id}.
 */

let stack: TestStack;
let accountId: string;
let accessToken: string;
const scheduled: Record<Namespace, string> = { "/v1": "", "/api": "" };

type Namespace = "/v1" | "/api";
const NAMESPACES: Namespace[] = ["/v1", "/api"];
const LATER = new Date(Date.now() + 7 * 86_400_000).toISOString();

interface Answer {
  status: number;
  type: string | null;
  location: string | null;
  body: unknown;
}

beforeAll(async () => {
  stack = await startTestStack("v1-namespace", {
    REEL_POLL_INTERVAL_MS: "200",
    SANDBOX_PROCESSING_MS: "200",
    // The sandbox fetches the videos from this stack's own /samples on 127.0.0.1.
    ALLOW_PRIVATE_URLS: "true",
  });
  const made = await control("POST", "accounts", { username: "v1_namespace" });
  accountId = String(made.account_id);
  accessToken = String(made.access_token);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

async function control(method: string, pathname: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.url}/graph/_sandbox/${pathname}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

async function call(tenant: string, pathname: string, init: RequestInit = {}): Promise<Answer> {
  const response = await stack.fetchAs(tenant, pathname, init);
  const type = response.headers.get("content-type");
  const text = await response.text();
  return {
    status: response.status,
    type,
    location: response.headers.get("location"),
    body: text && type?.includes("json") ? JSON.parse(text) : text,
  };
}

/** The same call at /v1 and at /api, one after the other. */
async function twins(tenant: string, rest: string, init: RequestInit = {}): Promise<Record<Namespace, Answer>> {
  return { "/v1": await call(tenant, `/v1${rest}`, init), "/api": await call(tenant, `/api${rest}`, init) };
}

const scheduleBody = (caption: string) =>
  JSON.stringify({
    account_id: accountId,
    video_url: `${stack.url}/samples/reel-valid.mp4`,
    caption,
    publish_at: LATER,
  });

async function settled(id: string): Promise<PublicationView> {
  return waitFor(
    async () => {
      const view = (await call("acme", `/v1/reels/${id}`)).body as PublicationView;
      return ["PUBLISHED", "FAILED", "TIMED_OUT", "CANCELLED"].includes(view.status) ? view : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200, what: `publication ${id} to settle` },
  );
}

describe("writes: the Location follows the namespace asked", () => {
  it.each(NAMESPACES)("POST %s/accounts connects the account, Location in the same namespace", async (ns) => {
    const answer = await call("acme", `${ns}/accounts`, {
      method: "POST",
      body: JSON.stringify({ account_id: accountId, access_token: accessToken, label: "namespace" }),
    });
    expect([answer.status, answer.location]).toEqual([201, `${ns}/accounts/${accountId}`]);
    expect(answer.body).toMatchObject({ account_id: accountId, status: "connected" });
  });

  it.each(NAMESPACES)("POST %s/reels accepts a scheduled reel, Location in the same namespace", async (ns) => {
    const key = `namespace-${ns.slice(1)}-${Date.now()}`;
    const init = { method: "POST", body: scheduleBody(`scheduled through ${ns}`), headers: { "idempotency-key": key } };
    const accepted = await call("acme", `${ns}/reels`, init);
    expect(accepted.status).toBe(202);
    const { publication_id } = accepted.body as { publication_id: string };
    expect(accepted.body).toEqual({ publication_id, status: "SCHEDULED" });
    expect(accepted.location).toBe(`${ns}/reels/${publication_id}`);
    scheduled[ns] = publication_id;

    // The same key again: the publication it made, with its Location, still in the namespace asked.
    const again = await call("acme", `${ns}/reels`, init);
    expect([again.status, again.location]).toEqual([200, `${ns}/reels/${publication_id}`]);
    expect(again.body).toMatchObject({ publication_id, status: "SCHEDULED" });
  });

  it("POST /v1/uploads stores a video as POST /api/uploads does", async () => {
    const video = readFileSync(path.join(ROOT, "public/samples/reel-valid.mp4"));
    const answers = await twins("acme", "/uploads", {
      method: "POST",
      body: video,
      headers: { "content-type": "video/mp4" },
    });
    for (const ns of NAMESPACES) {
      expect(answers[ns].status, ns).toBe(201);
      expect(answers[ns].body, ns).toMatchObject({ upload_id: expect.any(String), size: video.length });
    }
    const [v1, api] = NAMESPACES.map((ns) => answers[ns].body as Record<string, unknown>);
    expect(Object.keys(v1).sort()).toEqual(Object.keys(api).sort());
    expect(v1.upload_id).not.toBe(api.upload_id);
  });

  it.each(NAMESPACES)(
    "POST %s/reels/{id}/retry queues a FAILED reel again, Location in the same namespace",
    async (ns) => {
      await control("POST", `accounts/${accountId}/faults`, { on: "media", code: 100, count: 1 });
      const submitted = await call("acme", `${ns}/reels`, {
        method: "POST",
        body: JSON.stringify({ account_id: accountId, video_url: `${stack.url}/samples/reel-valid.mp4` }),
      });
      expect(submitted.status).toBe(202);
      const id = (submitted.body as { publication_id: string }).publication_id;
      expect((await settled(id)).status).toBe("FAILED");

      const retried = await call("acme", `${ns}/reels/${id}/retry`, { method: "POST" });
      expect([retried.status, retried.location]).toEqual([202, `${ns}/reels/${id}`]);
      expect(retried.body).toMatchObject({ publication_id: id, status: "QUEUED" });
      expect((await settled(id)).status).toBe("PUBLISHED");
    },
  );

  it("POST /v1/jobs points at the job's home, /v1/jobs/{id}; the short /jobs/{id} still answers the same", async () => {
    const submitted = await submitJob(stack, "acme", { prompt: "where does it live", max_tokens: 2 });
    expect(submitted.status).toBe(202);
    const { job_id } = (await submitted.json()) as { job_id: string };
    expect(submitted.headers.get("location")).toBe(`/v1/jobs/${job_id}`);
    const home = await call("acme", `/v1/jobs/${job_id}`);
    expect(home.status).toBe(200);
    expect(home.body).toMatchObject({ job_id });
    const finished = await waitFor(
      async () => {
        const job = (await call("acme", `/v1/jobs/${job_id}`)).body as { status: string };
        return job.status === "COMPLETED" ? job : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: "the job to complete" },
    );
    expect((await call("acme", `/jobs/${job_id}`)).body).toEqual(finished);
  });
});

describe("reads: each /v1 route answers as its /api twin", () => {
  // Read after the writes above have settled: both calls of a pair see the same state.
  const cases: [what: string, tenant: string, rest: () => string, init: RequestInit, status: number][] = [
    ["list reels", "acme", () => "/reels?limit=50", {}, 200],
    ["list SCHEDULED reels", "acme", () => "/reels?status=SCHEDULED", {}, 200],
    ["read a reel", "acme", () => `/reels/${scheduled["/v1"]}`, {}, 200],
    ["read a reel made at /api", "acme", () => `/reels/${scheduled["/api"]}`, {}, 200],
    ["another tenant's reel", "globex", () => `/reels/${scheduled["/v1"]}`, {}, 404],
    ["a bad list query", "acme", () => "/reels?limit=0", {}, 422],
    ["the insights of a reel not published", "acme", () => `/reels/${scheduled["/v1"]}/insights`, {}, 409],
    ["resume a reel that did not time out", "acme", () => `/reels/${scheduled["/v1"]}/resume`, { method: "POST" }, 409],
    ["list accounts", "acme", () => "/accounts", {}, 200],
    ["an account's insights", "acme", () => `/accounts/${accountId}/insights`, {}, 200],
    ["another tenant's account's posts", "globex", () => `/accounts/${accountId}/posts`, {}, 404],
    ["a method the route does not have", "acme", () => "/accounts", { method: "PATCH" }, 405],
    ["an upload without a video type", "acme", () => "/uploads", { method: "POST", body: "not a video" }, 415],
  ];

  it.each(cases)("%s", async (_what, tenant, rest, init, status) => {
    const answers = await twins(tenant, rest(), init);
    expect(answers["/v1"].status).toBe(status);
    expect(answers["/v1"]).toEqual(answers["/api"]);
  });

  it("the reels listed include those made through either namespace", async () => {
    const { data } = (await call("acme", "/v1/reels?status=SCHEDULED")).body as { data: PublicationView[] };
    expect(data.map((p) => p.publication_id).sort()).toEqual([scheduled["/v1"], scheduled["/api"]].sort());
  });

  it("DELETE at /v1 cancels what /api made, and the other way round", async () => {
    const cancelled = await call("acme", `/v1/reels/${scheduled["/api"]}`, { method: "DELETE" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ publication_id: scheduled["/api"], status: "CANCELLED" });
    const other = await call("acme", `/api/reels/${scheduled["/v1"]}`, { method: "DELETE" });
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ publication_id: scheduled["/v1"], status: "CANCELLED" });
  });
});
