import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Redis from "ioredis";
import { Webhook } from "standardwebhooks";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Producer } from "kafkajs";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { createPublicAgent } from "@/lib/net/public-agent";
import { announcePublication } from "@/lib/reels/publish/announce";
import { settledAnnouncement } from "@/lib/reels/publication-announcement";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { appendEvent } from "@/lib/reels/publication-record";
import { readPublication } from "@/lib/reels/read-publication";
import { submitPublication } from "@/lib/reels/submit-publication";
import { attemptDelivery, claimDueDeliveries } from "@/lib/webhooks/attempt-delivery";
import { enqueueWebhookEvent } from "@/lib/webhooks/enqueue-event";
import { webhookKeys } from "@/lib/webhooks/keys";
import { expectProblem, spawnWorker, waitFor, type WorkerProcess } from "../helpers";

/**
 * Webhooks on the real stack: the routes in this process, a real worker process (worker/index.ts)
 * that runs the job and delivers from the Redis queue, and receivers on 127.0.0.1 (allowed by
 * ALLOW_PRIVATE_URLS, as a local setup would).
 */
const ACME = "hookco-key-0123456789abcdef";
const GLOBEX = "hookrival-key-0123456789abcdef";
let env: Record<string, string>;
let redis: Redis;
let worker: WorkerProcess;
const receivers: Receiver[] = [];
let routes: {
  webhooks: typeof import("@/app/v1/webhooks/route");
  webhook: typeof import("@/app/v1/webhooks/[id]/route");
  deliveries: typeof import("@/app/v1/webhooks/[id]/deliveries/route");
  resend: typeof import("@/app/v1/webhooks/[id]/deliveries/[delivery_id]/resend/route");
  jobs: typeof import("@/app/v1/jobs/route");
  job: typeof import("@/app/jobs/[id]/route");
};

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}
interface Receiver {
  url: string;
  received: Received[];
  server: Server;
}

/** A webhook endpoint on 127.0.0.1 that answers the given statuses in turn (the last one from then on). */
async function startReceiver(statuses: number[] = [200]): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.writeHead(statuses[Math.min(received.length, statuses.length) - 1]).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const receiver = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, server };
  receivers.push(receiver);
  return receiver;
}

beforeAll(async () => {
  env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `hookco:${ACME},hookrival:${GLOBEX}`,
    LOCAL_MODEL_TOKENS_PER_SECOND: "1000",
    ALLOW_PRIVATE_URLS: "true",
    WEBHOOKS_PER_TENANT: "4",
    // Backoff in milliseconds so the retry test runs in seconds; the order of attempts is what it checks.
    WEBHOOK_RETRY_BASE_MS: "200",
    WEBHOOK_RETRY_MAX_MS: "1000",
    WEBHOOK_TIMEOUT_MS: "5000",
    // Resends are limited like submissions; this file submits three jobs.
    RATE_LIMIT_PER_MINUTE: "20",
  };
  Object.assign(process.env, env);
  redis = new Redis(env.REDIS_URL);
  routes = {
    webhooks: await import("@/app/v1/webhooks/route"),
    webhook: await import("@/app/v1/webhooks/[id]/route"),
    deliveries: await import("@/app/v1/webhooks/[id]/deliveries/route"),
    resend: await import("@/app/v1/webhooks/[id]/deliveries/[delivery_id]/resend/route"),
    jobs: await import("@/app/v1/jobs/route"),
    job: await import("@/app/jobs/[id]/route"),
  };
  worker = spawnWorker(env, "webhook-worker");
  await waitFor(() => worker.output().includes("worker ready"), { timeoutMs: 90_000, what: "the worker to start" });
});

afterAll(async () => {
  if (worker) {
    writeFileSync(`.test-data/${worker.id}.log`, worker.output());
    worker.child.kill("SIGTERM");
    await worker.exited;
    worker.assertNoUncaught();
  }
  for (const r of receivers) r.server.close();
  const { getServices } = await import("@/lib/web/services");
  await (await getServices().producer()).disconnect().catch(() => {});
  getServices().redis.disconnect();
  redis?.disconnect();
});

const auth = (key = ACME) => ({ authorization: `Bearer ${key}` });
const params = <T>(value: T) => ({ params: Promise.resolve(value) });

const createWebhook = (body: unknown, key = ACME) =>
  routes.webhooks.POST(
    new Request("http://x/v1/webhooks", {
      method: "POST",
      headers: { ...auth(key), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );
const listWebhooks = (key = ACME) =>
  routes.webhooks.GET(new Request("http://x/v1/webhooks", { headers: auth(key) }), undefined);
const deleteWebhook = (id: string, key = ACME) =>
  routes.webhook.DELETE(
    new Request(`http://x/v1/webhooks/${id}`, { method: "DELETE", headers: auth(key) }),
    params({ id }),
  );
const readDeliveries = (id: string, key = ACME) =>
  routes.deliveries.GET(new Request(`http://x/v1/webhooks/${id}/deliveries`, { headers: auth(key) }), params({ id }));
const resend = (id: string, delivery_id: string, key = ACME) =>
  routes.resend.POST(
    new Request(`http://x/v1/webhooks/${id}/deliveries/${delivery_id}/resend`, { method: "POST", headers: auth(key) }),
    params({ id, delivery_id }),
  );

async function newWebhook(url: string, events: string[] = ["job.completed"]) {
  const response = await createWebhook({ url, events });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; url: string; events: string[]; secret: string; created_at: string };
}

async function submitJob(prompt: string): Promise<string> {
  const response = await routes.jobs.POST(
    new Request("http://x/v1/jobs", {
      method: "POST",
      headers: { ...auth(), "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: "hookco", model_name: "local-ngram", prompt, max_tokens: 12 }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return (await response.json()).job_id;
}

async function attemptsOf(id: string, count: number) {
  return waitFor(
    async () => {
      const body = (await (await readDeliveries(id)).json()) as { data: Record<string, unknown>[] };
      return body.data.length >= count ? body.data : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `${count} recorded attempts` },
  );
}

describe("webhook deliveries from the worker", () => {
  it("delivers a job.completed signed as Standard Webhooks says, with the job as GET returns it", async () => {
    const receiver = await startReceiver([200]);
    const webhook = await newWebhook(receiver.url, ["job.completed", "job.failed"]);
    expect(webhook).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: receiver.url,
      events: ["job.completed", "job.failed"],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.any(String),
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
    });

    const jobId = await submitJob("The worker reads the log");
    await waitFor(() => receiver.received.length >= 1, { timeoutMs: 90_000, what: "the delivery" });
    const [delivery] = receiver.received;
    const headers = {
      "webhook-id": String(delivery.headers["webhook-id"]),
      "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery.headers["webhook-signature"]),
    };
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = new Webhook(webhook.secret).verify(delivery.body, headers) as {
      type: string;
      timestamp: string;
      data: { job_id: string };
    };
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(delivery.body, headers),
    ).toThrow();

    const job = await (
      await routes.job.GET(new Request(`http://x/jobs/${jobId}`, { headers: auth() }), params({ id: jobId }))
    ).json();
    expect(job.status).toBe("COMPLETED");
    expect(payload).toEqual({ type: "job.completed", timestamp: job.completed_at, data: job });

    const [attempt] = await attemptsOf(webhook.id, 1);
    expect(attempt).toEqual({
      id: headers["webhook-id"],
      event_type: "job.completed",
      attempt: 1,
      status_code: 200,
      attempted_at: expect.any(String),
      delivered_at: expect.any(String),
      next_attempt_at: null,
    });
    expect(receiver.received).toHaveLength(1);
  });

  it("delivers reel.published from the announcement a publication's final write makes on reels.publication.events", async () => {
    const receiver = await startReceiver([200]);
    const webhook = await newWebhook(receiver.url, ["reel.published"]);
    const account = { tenantId: "hookco", accountId: "17841400000000777", accessToken: "hookco-reel-token" };
    const deps = {
      redis,
      producer: async () => ({ send: async () => [] }) as unknown as Producer,
      connected: new ConnectedAccounts(redis, randomBytes(32), [account]),
    };
    const { publication } = await submitPublication(
      deps,
      "hookco",
      publicationInputSchema.parse({
        account_id: account.accountId,
        video_url: "https://videos.test/hook.mp4",
        caption: "announced",
      }),
    );
    const id = publication.publication_id;
    await appendEvent(redis, id, {
      status: "PUBLISHED",
      body: { kind: "step", step: { at: new Date().toISOString(), step: "published", detail: "out" } },
    });
    // What GET /api/reels/{id} answers once it is published: the announcement carries it.
    const published = (await readPublication(redis, "hookco", id))!;
    const { getServices } = await import("@/lib/web/services");
    await announcePublication(await getServices().producer(), settledAnnouncement(published));

    await waitFor(() => receiver.received.length >= 1, { timeoutMs: 90_000, what: "the reel delivery" });
    const [delivery] = receiver.received;
    const headers = {
      "webhook-id": String(delivery.headers["webhook-id"]),
      "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery.headers["webhook-signature"]),
    };
    const payload = new Webhook(webhook.secret).verify(delivery.body, headers);
    expect(payload).toEqual({ type: "reel.published", timestamp: published.updated_at, data: published });
    expect(published).toMatchObject({ publication_id: id, status: "PUBLISHED", caption: "announced" });
    // The tests below count this tenant's webhooks and reel.published deliveries: this one goes.
    expect((await deleteWebhook(webhook.id)).status).toBe(204);
  });

  it("tries again after 500s with backoff: the third attempt is delivered, and all three are recorded", async () => {
    const receiver = await startReceiver([500, 500, 200]);
    const webhook = await newWebhook(receiver.url);
    await submitJob("Try the receiver again");
    const attempts = await attemptsOf(webhook.id, 3);
    expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ]);
    expect(attempts[0]).toMatchObject({ delivered_at: expect.any(String), next_attempt_at: null });
    for (const failed of attempts.slice(1)) {
      expect(failed).toMatchObject({
        delivered_at: null,
        next_attempt_at: expect.any(String),
        error: "The endpoint answered HTTP 500",
      });
      expect(Date.parse(failed.next_attempt_at as string)).toBeGreaterThan(Date.parse(failed.attempted_at as string));
    }
    expect(receiver.received).toHaveLength(3);
    // One message, three attempts: the same id each time, each signed anew with its own timestamp.
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    for (const r of receiver.received) new Webhook(webhook.secret).verify(r.body, r.headers as Record<string, string>);

    // A resend sends the same message again, as attempt 4.
    const resent = await resend(webhook.id, String(attempts[0].id));
    expect(resent.status).toBe(202);
    const after = await attemptsOf(webhook.id, 4);
    expect(after[0]).toMatchObject({ id: attempts[0].id, attempt: 4, status_code: 200 });
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual(Array(4).fill(attempts[0].id));
  });
});

describe("the queue's guarantees", () => {
  const retry = { baseMs: 60_000, maxMs: 60_000, windowMs: 10_000 };

  it("lets one worker at a time claim a delivery, and another take it once the lease ends", async () => {
    const receiver = await startReceiver([200]);
    await newWebhook(receiver.url, ["reel.published"]);
    // Far in the future, so the running worker's loop (which claims only what is due now) leaves it alone.
    const future = Date.now() + 3_600_000;
    const [id] = await enqueueWebhookEvent(
      redis,
      {
        tenantId: "hookco",
        type: "reel.published",
        occurrence: "lease-test",
        at: new Date(),
        data: async () => ({ publication_id: "p1" }),
      },
      new Date(future),
    );
    expect(id).toMatch(/^msg_/);
    const claim = { id, tenantId: "hookco" };
    const [first, second] = await Promise.all([
      claimDueDeliveries(redis, future, 10, 30_000),
      claimDueDeliveries(redis, future, 10, 30_000),
    ]);
    expect([first.claims, second.claims].filter((claims) => claims.some((c) => c.id === id))).toEqual([[claim]]);
    expect((await claimDueDeliveries(redis, future + 29_999, 10, 30_000)).claims).not.toContainEqual(claim);
    // The first claimer died; after the lease another claims it and delivers.
    const again = await claimDueDeliveries(redis, future + 30_000, 10, 30_000);
    expect(again.claims).toContainEqual(claim);
    const dispatcher = new Agent();
    try {
      expect(await attemptDelivery({ redis, dispatcher, timeoutMs: 5000, retry }, claim, again.token)).toEqual({
        outcome: "delivered",
        eventType: "reel.published",
      });
      expect(await redis.zscore(webhookKeys.due("hookco"), id)).toBeNull();
      // The first claimer comes back late: its attempt is logged, but it moves nothing (the delivery stays delivered, unqueued).
      await attemptDelivery(
        { redis, dispatcher, timeoutMs: 5000, retry },
        claim,
        first.claims.length > 0 ? first.token : second.token,
      );
      expect(await redis.zscore(webhookKeys.due("hookco"), id)).toBeNull();
    } finally {
      await dispatcher.close();
    }
    expect(receiver.received).toHaveLength(2);
    expect(await redis.hget(webhookKeys.delivery(id), "state")).toBe("delivered");
  });

  it("refuses a private address unless ALLOW_PRIVATE_URLS, through the fetcher's guard, and disables a webhook that keeps failing", async () => {
    const receiver = await startReceiver([200]);
    const webhook = await newWebhook(receiver.url, ["reel.failed"]);
    const guarded = createPublicAgent({ allowPrivate: false });
    let clock = Date.now() + 7_200_000;
    const deps = { redis, dispatcher: guarded, timeoutMs: 5000, retry, now: () => clock };
    try {
      const [id] = await enqueueWebhookEvent(
        redis,
        {
          tenantId: "hookco",
          type: "reel.failed",
          occurrence: "one",
          at: new Date(),
          data: async () => ({ publication_id: "one" }),
        },
        new Date(clock),
      );
      // Its first attempt fails and is tried again; one a whole retry window later fails for good.
      for (const outcome of ["retrying", "failed"]) {
        const { claims, token } = await claimDueDeliveries(redis, clock, 100, 30_000);
        expect(claims).toContainEqual({ id, tenantId: "hookco" });
        expect((await attemptDelivery(deps, { id, tenantId: "hookco" }, token)).outcome).toBe(outcome);
        // Past the retry's wait (at most maxMs) and the window both.
        clock += Math.max(retry.windowMs, retry.maxMs);
      }
    } finally {
      await guarded.close();
    }
    expect(receiver.received).toHaveLength(0);
    const attempts = await attemptsOf(webhook.id, 2);
    expect(attempts.map((a) => [a.status_code, a.error, a.next_attempt_at])).toEqual([
      [null, "The URL does not lead to a public internet address", null],
      [null, "The URL does not lead to a public internet address", expect.any(String)],
    ]);
    const listed = (await (await listWebhooks()).json()).data.find((w: { id: string }) => w.id === webhook.id);
    expect(listed).toMatchObject({
      status: "disabled",
      disabled_at: expect.any(String),
      disabled_reason: expect.stringContaining("The URL does not lead to a public internet address"),
    });
    // A disabled webhook gets no new deliveries.
    expect(
      await enqueueWebhookEvent(redis, {
        tenantId: "hookco",
        type: "reel.failed",
        occurrence: "three",
        at: new Date(),
        data: async () => ({}),
      }),
    ).toEqual([]);
    expect((await deleteWebhook(webhook.id)).status).toBe(204);
  });
});

describe("the webhook routes", () => {
  it("lists without secrets, deletes with 204, and keeps at most WEBHOOKS_PER_TENANT", async () => {
    const before = (await (await listWebhooks()).json()).data as { id: string }[];
    for (const w of before) expect((await deleteWebhook(w.id)).status).toBe(204);
    const made: Awaited<ReturnType<typeof newWebhook>>[] = [];
    for (let i = 0; i < 4; i++) made.push(await newWebhook(`https://hooks.example.com/${i}`, ["reel.published"]));
    await expectProblem(await createWebhook({ url: "https://hooks.example.com/5", events: ["job.failed"] }), 409);
    const listed = await (await listWebhooks()).json();
    // Oldest first; two made in the same millisecond (a fast machine) by id.
    const byCreation = [...made].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    expect(listed.data.map((w: { id: string }) => w.id)).toEqual(byCreation.map((w) => w.id));
    expect(JSON.stringify(listed)).not.toContain("whsec_");
    expect(listed.data.find((w: { id: string }) => w.id === made[0].id)).toEqual({
      id: made[0].id,
      url: "https://hooks.example.com/0",
      events: ["reel.published"],
      created_at: made[0].created_at,
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
    });
    const gone = await deleteWebhook(made[0].id);
    expect(gone.status).toBe(204);
    await expectProblem(await deleteWebhook(made[0].id), 404);
    expect((await (await listWebhooks()).json()).data).toHaveLength(3);
    for (const w of made.slice(1)) await deleteWebhook(w.id);
  });

  it.each([
    ["an ftp URL", { url: "ftp://hooks.example.com/x", events: ["job.completed"] }, "url"],
    ["a URL that is not one", { url: "not a url", events: ["job.completed"] }, "url"],
    [
      "a URL over 2048 characters",
      { url: `https://hooks.example.com/${"a".repeat(2048)}`, events: ["job.completed"] },
      "url",
    ],
    ["credentials in the URL", { url: "https://user:pw@hooks.example.com/x", events: ["job.completed"] }, "url"],
    ["no events", { url: "https://hooks.example.com/x", events: [] }, "events"],
    ["an unknown event", { url: "https://hooks.example.com/x", events: ["job.exploded"] }, "events.0"],
    ["a missing url", { events: ["job.completed"] }, "url"],
    ["an unknown field", { url: "https://hooks.example.com/x", events: ["job.completed"], secret: "mine" }, "secret"],
  ])("answers 422 for %s", async (_what, body, path) => {
    const problem = await expectProblem(await createWebhook(body), 422);
    expect(problem.errors?.map((e) => e.path)).toContain(path);
  });

  it("answers 404 for another tenant's webhook and for ids that are not ours, and 401 without a key", async () => {
    const mine = await newWebhook("https://hooks.example.com/mine");
    await expectProblem(await deleteWebhook(mine.id, GLOBEX), 404);
    await expectProblem(await readDeliveries(mine.id, GLOBEX), 404);
    await expectProblem(await resend(mine.id, "msg_0123456789abcdef0123456789abcdef", GLOBEX), 404);
    await expectProblem(await resend(mine.id, "msg_0123456789abcdef0123456789abcdef"), 404);
    await expectProblem(await readDeliveries("../etc"), 404);
    await expectProblem(await resend(mine.id, "nope"), 404);
    expect((await (await listWebhooks(GLOBEX)).json()).data).toEqual([]);
    await expectProblem(await routes.webhooks.GET(new Request("http://x/v1/webhooks"), undefined), 401);
    const notAllowed = await expectProblem(await routes.webhooks.DELETE(), 405);
    expect(notAllowed.detail).toBe("This endpoint answers GET, HEAD, POST, OPTIONS.");
    expect((await deleteWebhook(mine.id)).status).toBe(204);
  });
});

// Last: it spends the tenant's resends for a minute.
describe("resending", () => {
  it("is rate-limited like submissions: past a minute's allowance, 429 with Retry-After", async () => {
    const receiver = await startReceiver([200]);
    const webhook = await newWebhook(receiver.url, ["reel.published"]);
    const [id] = await enqueueWebhookEvent(redis, {
      tenantId: "hookco",
      type: "reel.published",
      occurrence: `resend-limit-${Date.now()}`,
      at: new Date(),
      data: async () => ({ publication_id: "p" }),
    });
    await attemptsOf(webhook.id, 1);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 30; i++) {
      const response = await resend(webhook.id, id);
      statuses.push(response.status);
      if (response.status === 429) retryAfter = response.headers.get("retry-after");
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    expect(statuses.every((s) => [202, 409, 429].includes(s))).toBe(true);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect((await deleteWebhook(webhook.id)).status).toBe(204);
  });
});
