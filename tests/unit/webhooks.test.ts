import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import type { Producer } from "kafkajs";
import { parseConfig } from "@/lib/config";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { appendEvent, publicationKeys, type EventWrite } from "@/lib/reels/publication-record";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import type { GraphHosts } from "@/lib/graph/hosts";
import { readPublication } from "@/lib/reels/read-publication";
import { retryPublication } from "@/lib/reels/retry-publication";
import { runPublication, type PublicationDeps } from "@/lib/reels/run-publication";
import type { PublicationStatus } from "@/lib/reels/status";
import { submitPublication } from "@/lib/reels/submit-publication";
import { nextAttemptAt } from "@/lib/webhooks/backoff";
import { resendDelivery } from "@/lib/webhooks/deliveries";
import { parseRetryAfter } from "@/lib/webhooks/send-webhook";
import { enqueueWebhookEvent } from "@/lib/webhooks/enqueue-event";
import { WEBHOOK_EVENT_TYPES } from "@/lib/webhooks/events";
import { webhookInputSchema } from "@/lib/webhooks/input";
import { attemptDelivery, claimDueDeliveries, type DeliveryClaim } from "@/lib/webhooks/attempt-delivery";
import { startDeliveryLoop } from "@/lib/webhooks/delivery-loop";
import { TENANT_ATTEMPTS_IN_FLIGHT, webhookKeys } from "@/lib/webhooks/keys";
import { enqueuePublicationEvent } from "@/lib/webhooks/publication-events";
import {
  ANNOUNCED_TIMELINE_ENTRIES,
  settledAnnouncement,
  type PublicationAnnouncement,
} from "@/lib/reels/publication-announcement";
import { createWebhook, deleteWebhook } from "@/lib/webhooks/store";
import { enqueueJobEvent } from "@/lib/webhooks/job-events";
import { watchTenantsWithWebhooks } from "@/lib/webhooks/tenants-with-webhooks";
import type { JobAuditEvent } from "@/lib/jobs/audit-event";
import { createSubscriber } from "@/lib/redis";
import { TOPICS } from "@/lib/topics";
import { waitFor } from "../helpers";
import { realRedisPerFile } from "./real-redis";

const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "a:9092",
  API_KEYS: "acme:acme-key-0123456789abcdef",
};
const defaults = parseConfig(base);
const policy = {
  baseMs: defaults.WEBHOOK_RETRY_BASE_MS,
  maxMs: defaults.WEBHOOK_RETRY_MAX_MS,
  windowMs: defaults.WEBHOOK_RETRY_WINDOW_MS,
};

describe("webhook retries", () => {
  it("double the wait after each failure, with jitter in the upper half, up to the cap", () => {
    const waits = [1, 2, 3, 4].map((attempt) => [
      nextAttemptAt(policy, attempt, 0, 0, () => 0),
      nextAttemptAt(policy, attempt, 0, 0, () => 1),
    ]);
    expect(waits).toEqual([
      [5_000, 10_000],
      [10_000, 20_000],
      [20_000, 40_000],
      [40_000, 80_000],
    ]);
    expect(nextAttemptAt(policy, 30, 0, 0, () => 1)).toBe(policy.maxMs);
  });

  it("go on for at least 24 h by default, then give up", () => {
    expect(policy.windowMs).toBeGreaterThanOrEqual(24 * 3_600_000);
    // The quickest schedule (no jitter added) still spans the window before giving up.
    let now = 0;
    let attempt = 1;
    for (
      let next = nextAttemptAt(policy, attempt, 0, now, () => 0);
      next !== null;
      next = nextAttemptAt(policy, ++attempt, 0, now, () => 0)
    )
      now = next;
    expect(now).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(attempt).toBeLessThan(60);
  });
});

describe("webhook configuration", () => {
  it("has defaults", () => {
    expect([
      defaults.WEBHOOKS_PER_TENANT,
      defaults.WEBHOOK_TIMEOUT_MS,
      defaults.WEBHOOK_RETRY_BASE_MS,
      defaults.WEBHOOK_RETRY_MAX_MS,
      defaults.WEBHOOK_RETRY_WINDOW_MS,
    ]).toEqual([10, 10_000, 10_000, 3_600_000, 86_400_000]);
    expect(defaults.ALLOW_PRIVATE_URLS).toBe(false);
    expect(parseConfig({ ...base, ALLOW_PRIVATE_URLS: "true" }).ALLOW_PRIVATE_URLS).toBe(true);
    expect(() => parseConfig({ ...base, WEBHOOK_TIMEOUT_MS: "0" })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });
});

describe("the webhook input", () => {
  const strict = webhookInputSchema({ allowPrivate: false });
  const open = webhookInputSchema({ allowPrivate: true });

  it.each([
    "http://127.0.0.1:8080/hook",
    "http://localhost/hook",
    "http://[::1]/hook",
    "http://10.0.0.7/hook",
    "http://169.254.169.254/latest",
    "http://192.168.1.2/",
    "http://[::ffff:127.0.0.1]/",
  ])("refuses %s unless private addresses are allowed", (url) => {
    expect(strict.safeParse({ url, events: ["job.completed"] }).success).toBe(false);
    expect(open.safeParse({ url, events: ["job.completed"] }).success).toBe(true);
  });

  it("takes public http and https URLs, and keeps each event once, in the declared order", () => {
    expect(
      strict.parse({ url: "https://hooks.example.com/x", events: ["reel.failed", "job.completed", "reel.failed"] }),
    ).toEqual({ url: "https://hooks.example.com/x", events: ["job.completed", "reel.failed"] });
    expect(strict.safeParse({ url: "http://93.184.216.34/x", events: [...WEBHOOK_EVENT_TYPES] }).success).toBe(true);
  });
});

describe("queuing an event", () => {
  const redis = realRedisPerFile();
  const input = { url: "https://hooks.example.com/x", events: ["job.completed" as const] };

  it("makes one delivery per subscribed webhook and occurrence, none for webhooks made after the event", async () => {
    const early = await createWebhook(redis(), "acme", input, 10, new Date("2026-01-01T00:00:00Z"));
    await createWebhook(redis(), "acme", { ...input, events: ["job.failed"] }, 10, new Date("2026-01-01T00:00:00Z"));
    await createWebhook(redis(), "acme", input, 10, new Date("2026-01-03T00:00:00Z"));
    await createWebhook(redis(), "globex", input, 10, new Date("2026-01-01T00:00:00Z"));
    let reads = 0;
    const event = {
      tenantId: "acme",
      type: "job.completed" as const,
      occurrence: "job:1",
      at: new Date("2026-01-02T00:00:00Z"),
      data: async () => (++reads, { job_id: "1" }),
    };
    const ids = await enqueueWebhookEvent(redis(), event);
    expect(ids).toHaveLength(1);
    expect(await redis().hget(webhookKeys.delivery(ids[0]), "webhook_id")).toBe(early.id);
    expect(JSON.parse((await redis().hget(webhookKeys.delivery(ids[0]), "body"))!)).toEqual({
      type: "job.completed",
      timestamp: "2026-01-02T00:00:00.000Z",
      data: { job_id: "1" },
    });
    expect(await redis().zscore(webhookKeys.due("acme"), ids[0])).not.toBeNull();
    // The same occurrence again (a redelivered audit message): no second delivery.
    expect(await enqueueWebhookEvent(redis(), event)).toEqual([]);
    // Nobody subscribed: the job is not even read.
    await enqueueWebhookEvent(redis(), { ...event, type: "job.cancelled" });
    expect(reads).toBe(2);
  });

  it("asks Redis once whether a tenant has a webhook, and hears at once of one made since", async () => {
    const tenant = `quiet-${randomBytes(4).toString("hex")}`;
    const subscriber = createSubscriber(`redis://127.0.0.1:${redis().options.port}`);
    const commands = async () =>
      [...(await redis().info("commandstats")).matchAll(/cmdstat_(\w+):calls=(\d+)/g)]
        .filter(([, name]) => name !== "info" && name !== "config")
        .reduce((sum, [, , calls]) => sum + Number(calls), 0);
    try {
      // A clock that stands still: the cached answer never lapses, only the creation's message ends it.
      const tenants = await watchTenantsWithWebhooks(redis(), subscriber, () => 0);
      await redis().config("RESETSTAT");
      const event = auditEvent(tenant);
      // Not known before it is asked: its events are parsed and looked at.
      expect(tenants.knownWithout(tenant)).toBe(false);
      for (let n = 0; n < 100; n++) expect(await enqueueJobEvent(redis(), tenants, event)).toEqual([]);
      expect(await commands()).toBe(1);
      expect(tenants.knownWithout(tenant)).toBe(true);
      await createWebhook(redis(), tenant, input, 10, new Date(Date.parse(event.completed_at!) - 1000));
      await waitFor(() => !tenants.knownWithout(tenant), { what: "the worker's cache to forget it had none" });
      await waitFor(() => tenants.has(tenant), { what: "the worker's cache to hear of the new webhook" });
      expect(tenants.knownWithout(tenant)).toBe(false);
      // The job is gone from Redis (none was stored here: deleted, or expired in a backlog): it is
      // delivered all the same, as its event says it finished.
      const [id] = await enqueueJobEvent(redis(), tenants, event);
      expect(JSON.parse((await redis().hget(webhookKeys.delivery(id), "body"))!)).toEqual({
        type: "job.completed",
        timestamp: event.completed_at,
        data: {
          job_id: event.job_id,
          tenant_id: tenant,
          model_name: "local-ngram",
          status: "COMPLETED",
          finish_reason: "stop",
          prompt: "p",
          temperature: 0,
          max_tokens: 4,
          output: "o",
          usage: null,
          cost: null,
          cost_note: null,
          created_at: event.submitted_at,
          started_at: event.started_at,
          completed_at: event.completed_at,
          ttft_ms: null,
          tokens_per_second: null,
          attempts: 1,
          error: null,
          stream_url: `/jobs/${event.job_id}/stream`,
        },
      });
    } finally {
      subscriber.disconnect();
    }
  }, 60_000);
});

/** A finished job's audit event, of a job Redis no longer holds. */
const auditEvent = (tenantId: string): JobAuditEvent => ({
  job_id: `job-${randomBytes(4).toString("hex")}`,
  tenant_id: tenantId,
  model_name: "local-ngram",
  model_version: "local-ngram",
  prompt: "p",
  parameters: { temperature: 0, max_tokens: 4 },
  output: "o",
  status: "COMPLETED",
  finish_reason: "stop",
  error: null,
  usage: null,
  cost: null,
  cost_note: null,
  timing: { queued_ms: 0, ttft_ms: null, generation_ms: 1, tokens_per_second: null },
  worker_id: "w",
  attempt: 1,
  submitted_at: new Date().toISOString(),
  started_at: new Date().toISOString(),
  completed_at: new Date().toISOString(),
});

describe("resending a delivery", () => {
  const redis = realRedisPerFile();
  const input = { url: "https://hooks.example.com/x", events: ["job.completed" as const] };

  it("makes a pending delivery due now without restarting its retry window; one that ended gets a fresh window", async () => {
    const webhook = await createWebhook(redis(), "acme", input, 10, new Date("2026-01-01T00:00:00Z"));
    const queued = new Date("2026-01-02T00:00:00Z");
    const [id] = await enqueueWebhookEvent(
      redis(),
      {
        tenantId: "acme",
        type: "job.completed",
        occurrence: "job:resend",
        at: queued,
        data: async () => ({ job_id: "r" }),
      },
      queued,
    );
    // Its window is not open until its first attempt; say that attempt failed an hour after it was queued.
    expect(await redis().hget(webhookKeys.delivery(id), "retry_from")).toBeNull();
    const firstAttempt = String(queued.getTime() + 3_600_000);
    await redis().hset(webhookKeys.delivery(id), "retry_from", firstAttempt, "attempts", "1");
    const later = queued.getTime() + 5 * 3_600_000;
    for (let i = 1; i <= 3; i++) {
      expect(await resendDelivery(redis(), "acme", webhook.id, id, later + i)).toEqual({ id, status: "pending" });
      expect(await redis().hget(webhookKeys.delivery(id), "retry_from")).toBe(firstAttempt);
      expect(await redis().zscore(webhookKeys.due("acme"), id)).toBe(String(later + i));
    }
    // Given up at the end of its window: a resend starts a new one.
    await redis().hset(webhookKeys.delivery(id), "state", "failed");
    await redis().zrem(webhookKeys.due("acme"), id);
    const dayLater = queued.getTime() + 25 * 3_600_000;
    await resendDelivery(redis(), "acme", webhook.id, id, dayLater);
    expect(await redis().hmget(webhookKeys.delivery(id), "state", "retry_from")).toEqual(["pending", String(dayLater)]);
  });

  it("counts a delivery's retry window from its first attempt, not from when it was queued", async () => {
    const failing = createServer((request, response) => {
      request.resume();
      request.on("end", () => response.writeHead(500).end("no"));
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    const dispatcher = new Agent();
    try {
      const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/hook`;
      const queued = Date.now();
      await createWebhook(redis(), "backlogco", { url, events: ["job.completed"] }, 10, new Date(queued - 60_000));
      const [id] = await enqueueWebhookEvent(
        redis(),
        {
          tenantId: "backlogco",
          type: "job.completed",
          occurrence: "job:late",
          at: new Date(queued),
          data: async () => ({}),
        },
        new Date(queued),
      );
      const DAY_MS = 86_400_000;
      const attemptAt = async (at: number) => {
        const { claims, token } = await claimDueDeliveries(redis(), at, 100, 30_000);
        const claim = claims.find((c) => c.id === id);
        if (!claim) throw new Error("not claimed");
        const deps = {
          redis: redis(),
          dispatcher,
          timeoutMs: 10_000,
          retry: { baseMs: 60_000, maxMs: 60_000, windowMs: DAY_MS },
          now: () => at,
        };
        return (await attemptDelivery(deps, claim, token)).outcome;
      };
      // The tenant's queue was behind: the first attempt comes 25 h after the event was queued,
      // fails, and is tried again; the window opens at that attempt.
      const first = queued + 25 * 3_600_000;
      expect(await attemptAt(first)).toBe("retrying");
      expect(await redis().hget(webhookKeys.delivery(id), "retry_from")).toBe(String(first));
      expect(await attemptAt(first + DAY_MS - 60_000)).toBe("retrying");
      // Given up once its first attempt is a day old.
      expect(await attemptAt(first + DAY_MS)).toBe("failed");
    } finally {
      await dispatcher.close();
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  it("disables a webhook whose endpoint answers 410 Gone at once, and waits out a Retry-After", async () => {
    const answers = [
      { status: 503, headers: { "retry-after": "1800" } },
      { status: 410, headers: {} },
    ];
    const endpoint = createServer((request, response) => {
      request.resume();
      const answer = answers.shift()!;
      request.on("end", () => response.writeHead(answer.status, answer.headers).end());
    });
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    const dispatcher = new Agent();
    try {
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hook`;
      const webhook = await createWebhook(
        redis(),
        "goneco",
        { url, events: ["job.completed"] },
        10,
        new Date(Date.now() - 60_000),
      );
      const [id] = await enqueueWebhookEvent(redis(), {
        tenantId: "goneco",
        type: "job.completed",
        occurrence: "job:gone",
        at: new Date(),
        data: async () => ({}),
      });
      let clock = Date.now();
      const attempt = async () => {
        const { claims, token } = await claimDueDeliveries(redis(), clock, 100, 30_000);
        const claim = claims.find((c) => c.id === id);
        if (!claim) throw new Error("not claimed");
        const retry = { baseMs: 1000, maxMs: 3_600_000, windowMs: 86_400_000 };
        return (
          await attemptDelivery(
            { redis: redis(), dispatcher, timeoutMs: 10_000, retry, now: () => clock },
            claim,
            token,
          )
        ).outcome;
      };
      // 503 with Retry-After: 1800: the next attempt is half an hour away, not the backoff's second.
      expect(await attempt()).toBe("retrying");
      expect(Number(await redis().zscore(webhookKeys.due("goneco"), id))).toBeGreaterThanOrEqual(clock + 1_800_000);
      clock += 1_800_000;
      // 410 Gone: no further attempt, and the webhook is disabled with the reason.
      expect(await attempt()).toBe("failed");
      expect(await redis().zscore(webhookKeys.due("goneco"), id)).toBeNull();
      expect(await redis().hmget(webhookKeys.webhook(webhook.id), "disabled_reason")).toEqual([
        expect.stringContaining("410 Gone"),
      ]);
    } finally {
      await dispatcher.close();
      await new Promise((resolve) => endpoint.close(resolve));
    }
  });

  it("reads Retry-After as seconds or as a date", () => {
    const now = Date.parse("2026-11-27T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Fri, 27 Nov 2026 10:05:00 GMT", now)).toBe(300_000);
    expect(parseRetryAfter("Fri, 27 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  /** A tenant's webhook and one delivery of it a worker claimed `now` with a 30 s lease. */
  async function claimedDelivery(tenantId: string) {
    const webhook = await createWebhook(redis(), tenantId, input, 10, new Date(Date.now() - 60_000));
    const [id] = await enqueueWebhookEvent(redis(), {
      tenantId,
      type: "job.completed",
      occurrence: `job:${tenantId}`,
      at: new Date(),
      data: async () => ({}),
    });
    const now = Date.now();
    const { claims } = await claimDueDeliveries(redis(), now, 100, 30_000);
    expect(claims.map((c) => c.id)).toContain(id);
    return { webhook, id, now };
  }

  it("refuses to resend a delivery a worker has just claimed, before its attempt has begun", async () => {
    const { webhook, id, now } = await claimedDelivery("claimco");
    // The claim holds it from the claim's own step: a resend now must not make it due for another worker.
    await expect(resendDelivery(redis(), "claimco", webhook.id, id, now + 1)).rejects.toThrow(/being attempted/);
    expect((await claimDueDeliveries(redis(), now + 2, 100, 30_000)).claims.map((c) => c.id)).not.toContain(id);
  });

  it("resends a delivery whose claim's lease ran out with its worker gone", async () => {
    const { webhook, id, now } = await claimedDelivery("lapsedco");
    // The worker died: nothing is under way once its lease is over, so a resend is taken.
    await expect(resendDelivery(redis(), "lapsedco", webhook.id, id, now + 30_001)).resolves.toEqual({
      id,
      status: "pending",
    });
    expect((await claimDueDeliveries(redis(), now + 30_002, 100, 30_000)).claims.map((c) => c.id)).toContain(id);
  });
});

describe("delivery fairness", () => {
  const redis = realRedisPerFile();
  const servers: Server[] = [];
  afterAll(() => servers.forEach((server) => (server.closeAllConnections(), server.close())));

  /** A local endpoint: `answer` false holds every request open; `seen` counts requests as they arrive. */
  async function endpoint(answer: boolean): Promise<{ url: string; seen: () => number; server: Server }> {
    let seen = 0;
    const server = createServer((request, response) => {
      seen++;
      request.resume();
      if (answer) request.on("end", () => response.writeHead(200).end("ok"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, seen: () => seen, server };
  }

  const event = (tenantId: string, occurrence: string) => ({
    tenantId,
    type: "job.completed" as const,
    occurrence,
    at: new Date(),
    data: async () => ({ job_id: occurrence }),
  });

  it("a tenant whose 9 endpoints hang holds at most its share of attempts: another tenant's delivery goes out meanwhile", async () => {
    const hanging = await endpoint(false);
    const fine = await endpoint(true);
    const before = new Date(Date.now() - 60_000);
    for (let i = 0; i < 9; i++)
      await createWebhook(redis(), "floodco", { url: `${hanging.url}/${i}`, events: ["job.completed"] }, 10, before);
    await createWebhook(redis(), "calmco", { url: fine.url, events: ["job.completed"] }, 10, before);
    for (let job = 0; job < 30; job++) await enqueueWebhookEvent(redis(), event("floodco", `flood-${job}`));
    await enqueueWebhookEvent(redis(), event("calmco", "calm-1"));

    const dispatcher = new Agent();
    const loop = startDeliveryLoop({
      redis: redis(),
      dispatcher,
      log: () => {},
      timeoutMs: 50_000,
      retry: { baseMs: 60_000, maxMs: 60_000, windowMs: 3_600_000 },
      concurrency: 16,
    });
    try {
      await waitFor(() => fine.seen() === 1, { what: "the calm tenant's delivery" });
      // The flood's attempts all hang: only its cap of them ever started, whatever the worker's free slots.
      expect(hanging.seen()).toBeLessThanOrEqual(TENANT_ATTEMPTS_IN_FLIGHT);
    } finally {
      // Stopping waits for the attempts under way: end the hanging ones, also any started meanwhile.
      const ending = setInterval(() => hanging.server.closeAllConnections(), 50);
      await loop.stop();
      clearInterval(ending);
      await dispatcher.close();
    }
  }, 60_000);

  it("takes tenants in turn, each within its cap, the one waiting longest first", async () => {
    const now = Date.now() + 10 * 3_600_000;
    const at = (minutes: number) => new Date(now - minutes * 60_000);
    const created = new Date(Date.now() - 60_000);
    await createWebhook(
      redis(),
      "turn-a",
      { url: "https://hooks.example.com/a", events: ["job.completed"] },
      10,
      created,
    );
    await createWebhook(
      redis(),
      "turn-b",
      { url: "https://hooks.example.com/b", events: ["job.completed"] },
      10,
      created,
    );
    for (let i = 0; i < 6; i++) await enqueueWebhookEvent(redis(), event("turn-a", `a-${i}`), at(50 - i));
    await enqueueWebhookEvent(redis(), event("turn-b", "b-0"), at(10));
    // Other tests' tenants may have deliveries due by then too: only these two are looked at.
    const ours = (claims: DeliveryClaim[]) =>
      claims.filter((c) => c.tenantId.startsWith("turn-")).map((c) => c.tenantId);
    expect(ours((await claimDueDeliveries(redis(), now, 10, 30_000, 2)).claims)).toEqual([
      "turn-a",
      "turn-b",
      "turn-a",
    ]);
    expect(ours((await claimDueDeliveries(redis(), now, 10, 30_000, 2)).claims)).toEqual([]);
  });

  it("moves deliveries queued before there was a queue per tenant into their tenant's, and claims them", async () => {
    const id = "msg_legacy0000000000000000000000000";
    await redis().hset(webhookKeys.delivery(id), { id, tenant_id: "legacyco", state: "pending" });
    await redis().zadd(webhookKeys.legacyDue, 1, id);
    expect((await claimDueDeliveries(redis(), Date.now(), 100, 30_000)).claims).toContainEqual({
      id,
      tenantId: "legacyco",
    });
    expect(await redis().zcard(webhookKeys.legacyDue)).toBe(0);
    expect(await redis().zscore(webhookKeys.due("legacyco"), id)).not.toBeNull();
  });

  it("bounds a tenant's pending deliveries: past the bound an event is not queued, and the attempt log says why", async () => {
    const webhook = await createWebhook(
      redis(),
      "boundco",
      { url: "https://hooks.example.com/bound", events: ["job.completed"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const created: string[] = [];
    for (let i = 0; i < 5; i++)
      created.push(...(await enqueueWebhookEvent(redis(), event("boundco", `bound-${i}`), new Date(), 3)));
    expect(created).toHaveLength(3);
    expect(await redis().zcard(webhookKeys.due("boundco"))).toBe(3);
    const log = (await redis().lrange(webhookKeys.attempts(webhook.id), 0, -1)).map((line) => JSON.parse(line));
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({
      attempt: 0,
      status_code: null,
      error: "Not sent: this tenant already had 3 deliveries waiting (its endpoints are slow or failing)",
    });
  });
});
/**
 * A settled announcement as workers made it before it carried the view (lib/reels/publish/announce.ts):
 * the consumer reads the publication then, as it always did.
 */
const bareAnnouncement = (
  tenantId: string,
  id: string,
  status: PublicationAnnouncement["status"],
): PublicationAnnouncement => ({ publication_id: id, tenant_id: tenantId, kind: "settled", status });

describe("a publication's final write", () => {
  const redis = realRedisPerFile();
  const account = { tenantId: "reelco", accountId: "17841400000000909", accessToken: "reelco-token" };
  const waiting = { ...account, tenantId: "waitco", accountId: "17841400000000910" };
  const moving = { ...account, tenantId: "moveco", accountId: "17841400000000911" };
  let accounts: ConnectedAccounts | undefined;
  /** The accounts seeded over the real Redis, as REEL_ACCOUNTS seeds them in production. */
  const connected = () => (accounts ??= new ConnectedAccounts(redis(), randomBytes(32), [account, waiting, moving]));
  const silentProducer = async () => ({ send: async () => [] }) as unknown as Producer;
  const submit = async (tenantId: string, input: Record<string, unknown>) => {
    const deps = { redis: redis(), producer: silentProducer, connected: connected() };
    const { publication } = await submitPublication(deps, tenantId, publicationInputSchema.parse(input));
    return publication.publication_id;
  };
  /** A producer that keeps what the flow announces on reels.publication.events, parsed as the consumer kit does. */
  const announcer = () => {
    const announced: PublicationAnnouncement[] = [];
    const producer = {
      send: async ({ messages }: { messages: { value: string }[] }) =>
        void announced.push(...messages.map((m) => TOPICS.reelEvents.schema.parse(JSON.parse(m.value)))),
    } as unknown as Producer;
    return { announced, producer };
  };
  const run = (id: string, deps: Pick<PublicationDeps, "producer" | "connected">) =>
    runPublication(
      {
        redis: redis(),
        graphs: {} as GraphHosts,
        log: () => {},
        workerId: "w",
        pollIntervalMs: 10,
        pollAttempts: 1,
        ...deps,
      },
      id,
      { heartbeat: async () => {}, shutdown: new AbortController().signal, runId: `run-${Math.random()}` },
    );
  /** The bodies of the deliveries queued for a tenant's events about one publication. */
  const queuedBodies = async (tenantId: string, id: string) => {
    const ids = await redis().zrange(webhookKeys.due(tenantId), 0, -1);
    const bodies = await Promise.all(ids.map((d) => redis().hget(webhookKeys.delivery(d), "body")));
    return bodies.filter((b): b is string => !!b && b.includes(id)).map((b) => JSON.parse(b));
  };
  const step = (status: PublicationStatus, detail: string = status): EventWrite => ({
    status,
    body: { kind: "step", step: { at: new Date().toISOString(), step: status.toLowerCase(), detail } },
  });

  it("queues reel.published with the publication as GET returns it, once per write; a timed-out one asks for attention", async () => {
    const webhook = await createWebhook(
      redis(),
      "reelco",
      { url: "https://hooks.example.com/r", events: ["reel.published", "reel.needs_attention"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const id = await submit("reelco", {
      account_id: account.accountId,
      video_url: "https://videos.test/a.mp4",
      caption: "hi",
    });
    const settle = async (status: "TIMED_OUT" | "PUBLISHED") => {
      await appendEvent(redis(), id, step(status));
      await enqueuePublicationEvent(redis(), connected(), bareAnnouncement("reelco", id, status));
    };
    await settle("TIMED_OUT");
    await settle("PUBLISHED");
    await enqueuePublicationEvent(redis(), connected(), bareAnnouncement("reelco", id, "PUBLISHED"));
    const events = await queuedBodies("reelco", id);
    expect(events.map((e) => e.type).sort()).toEqual(["reel.needs_attention", "reel.published"]);
    const published = events.find((e) => e.type === "reel.published");
    expect(published.data).toMatchObject({
      publication_id: id,
      tenant_id: "reelco",
      status: "PUBLISHED",
      caption: "hi",
    });
    expect(published.timestamp).toBe(published.data.updated_at);
    expect(
      await redis().hget(
        webhookKeys.delivery((await redis().zrange(webhookKeys.due("reelco"), 0, -1))[0]),
        "webhook_id",
      ),
    ).toBe(webhook.id);
  });

  it("a publication waiting for its account to be reconnected asks for attention, once per wait", async () => {
    await createWebhook(
      redis(),
      "waitco",
      { url: "https://hooks.example.com/n", events: ["reel.needs_attention"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const id = await submit("waitco", { account_id: waiting.accountId, video_url: "https://videos.test/b.mp4" });
    const waits: PublicationAnnouncement = {
      publication_id: id,
      tenant_id: "waitco",
      kind: "needs_reconnect",
      status: "SCHEDULED",
    };
    await enqueuePublicationEvent(redis(), connected(), waits); // not waiting: nothing
    await appendEvent(redis(), id, {
      status: "SCHEDULED",
      body: { kind: "step", step: { at: new Date().toISOString(), step: "waiting", detail: "token refused" } },
      fields: { scheduled_reason: "needs_reconnect" },
    });
    await enqueuePublicationEvent(redis(), connected(), waits);
    await enqueuePublicationEvent(redis(), connected(), waits);
    const bodies = await queuedBodies("waitco", id);
    expect(bodies.map((b) => [b.type, b.data.scheduled_reason])).toEqual([["reel.needs_attention", "needs_reconnect"]]);
  });

  /** Graph's 190 as a publication or the account list records it on the account. */
  const tokenRefused = {
    code: 190,
    subcode: 463,
    message: "Error validating access token: Session has expired",
    fbtrace_id: "A9",
    classification: "reconnect-account" as const,
    headline: "Graph refused the account's access token.",
    remedy: "Reconnect the account.",
    advice: "Reconnect the account.",
  };

  it("a publication's refusal that marked its account sends account.needs_reconnect once per token, however many reels wait", async () => {
    const refusing = { ...account, tenantId: "refuseco", accountId: "17841400000000912" };
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), [refusing]);
    await createWebhook(
      redis(),
      "refuseco",
      { url: "https://hooks.example.com/a", events: ["account.needs_reconnect"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const deps = { redis: redis(), producer: silentProducer, connected: accounts };
    const input = { account_id: refusing.accountId, video_url: "https://videos.test/c.mp4" };
    const ids = await Promise.all(
      [1, 2].map(
        async () => (await submitPublication(deps, "refuseco", publicationInputSchema.parse(input))).publication,
      ),
    );
    const waitFor = async (id: string) => {
      await appendEvent(redis(), id, {
        status: "SCHEDULED",
        body: { kind: "step", step: { at: new Date().toISOString(), step: "waiting", detail: "token refused" } },
        fields: { scheduled_reason: "needs_reconnect" },
      });
      await enqueuePublicationEvent(redis(), accounts, {
        publication_id: id,
        tenant_id: "refuseco",
        kind: "needs_reconnect",
        status: "SCHEDULED",
      });
    };
    const { tokenVersion } = (await accounts.find("refuseco", refusing.accountId))!;
    expect(await accounts.markNeedsReconnect(refusing.accountId, tokenVersion, tokenRefused)).toBe(true);
    for (const { publication_id: id } of ids) await waitFor(id);
    const bodies = await queuedBodies("refuseco", refusing.accountId);
    expect(bodies.map((b) => [b.type, b.data.account_id, b.data.status, b.data.error?.code])).toEqual([
      ["account.needs_reconnect", refusing.accountId, "needs_reconnect", 190],
    ]);
  });

  it("sends account.needs_reconnect once per token even after its deliveries expired, and when the waiting reel was cancelled since", async () => {
    const refusing = { ...account, tenantId: "laterco", accountId: "17841400000000913" };
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), [refusing]);
    await createWebhook(
      redis(),
      "laterco",
      { url: "https://hooks.example.com/later", events: ["account.needs_reconnect"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const deps = { redis: redis(), producer: silentProducer, connected: accounts };
    const input = { account_id: refusing.accountId, video_url: "https://videos.test/e.mp4" };
    const { publication } = await submitPublication(deps, "laterco", publicationInputSchema.parse(input));
    const { tokenVersion } = (await accounts.find("laterco", refusing.accountId))!;
    expect(await accounts.markNeedsReconnect(refusing.accountId, tokenVersion, tokenRefused)).toBe(true);
    // The reel that waited was cancelled before the consumer read its announcement: the account still needs reconnecting.
    const waits: PublicationAnnouncement = {
      publication_id: publication.publication_id,
      tenant_id: "laterco",
      kind: "needs_reconnect",
      status: "SCHEDULED",
      account_id: refusing.accountId,
    };
    await enqueuePublicationEvent(redis(), accounts, waits);
    const first = await redis().zrange(webhookKeys.due("laterco"), 0, -1);
    expect(first).toHaveLength(1);
    // Nine days later its delivery record is gone (kept 7 days); another reel waits on the same token.
    await redis().del(...first.map((d) => webhookKeys.delivery(d)), webhookKeys.due("laterco"));
    await enqueuePublicationEvent(redis(), accounts, waits);
    expect(await redis().zrange(webhookKeys.due("laterco"), 0, -1)).toEqual([]);
  });

  it("is announced again by a redelivered message that finds the publication settled (the run that wrote it died first), and queued once", async () => {
    await createWebhook(
      redis(),
      "reelco",
      { url: "https://hooks.example.com/r2", events: ["reel.failed"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const id = await submit("reelco", { account_id: account.accountId, video_url: "https://videos.test/b.mp4" });
    await appendEvent(redis(), id, step("FAILED", "x"));
    const { announced, producer } = announcer();
    expect(await run(id, { producer, connected: connected() })).toBe("skipped");
    // A second redelivery (that run died after announcing, before its commit) finds it announced; one
    // whose mark was lost too announces it again.
    expect(await run(id, { producer, connected: connected() })).toBe("skipped");
    await redis().hdel(publicationKeys.state(id), "announced");
    expect(await run(id, { producer, connected: connected() })).toBe("skipped");
    const failed = settledAnnouncement((await readPublication(redis(), "reelco", id))!);
    expect(announced).toEqual([failed, failed]);
    for (const announcement of announced) await enqueuePublicationEvent(redis(), connected(), announcement);
    const bodies = await queuedBodies("reelco", id);
    expect(bodies.map((b) => [b.type, b.data.status])).toEqual([["reel.failed", "FAILED"]]);
  });

  const movedOn: [string, (id: string) => Promise<unknown>, PublicationStatus | undefined][] = [
    [
      "retried by its client",
      (id) => retryPublication({ redis: redis(), producer: silentProducer }, "moveco", id),
      "QUEUED",
    ],
    ["expired", (id) => redis().del(publicationKeys.state(id), publicationKeys.events(id)), undefined],
  ];
  it.each(movedOn)(
    "sends reel.failed with the publication as GET showed it failed, though it was %s before the announcement was read",
    async (_, moveOn, statusSince) => {
      const webhook = await createWebhook(
        redis(),
        "moveco",
        { url: "https://hooks.example.com/moved", events: ["reel.failed"] },
        10,
        new Date(Date.now() - 60_000),
      );
      onTestFinished(() => deleteWebhook(redis(), "moveco", webhook.id));
      const id = await submit("moveco", { account_id: moving.accountId, video_url: "https://videos.test/m.mp4" });
      const { announced, producer } = announcer();
      // The account is gone by the time a worker takes the publication up: it fails.
      const gone = { find: async () => undefined } as unknown as ConnectedAccounts;
      expect(await run(id, { producer, connected: gone })).toBe("failed");
      const failed = await readPublication(redis(), "moveco", id);
      expect(failed?.status).toBe("FAILED");
      await moveOn(id);
      expect((await readPublication(redis(), "moveco", id))?.status).toBe(statusSince);
      for (const announcement of announced) await enqueuePublicationEvent(redis(), connected(), announcement);
      expect(await queuedBodies("moveco", id)).toEqual([
        { type: "reel.failed", timestamp: failed!.updated_at, data: failed },
      ]);
    },
  );

  it("sends reel.failed when the run died before announcing it and the client retried before its redelivery", async () => {
    const webhook = await createWebhook(
      redis(),
      "moveco",
      { url: "https://hooks.example.com/died", events: ["reel.failed"] },
      10,
      new Date(Date.now() - 60_000),
    );
    onTestFinished(() => deleteWebhook(redis(), "moveco", webhook.id));
    const id = await submit("moveco", { account_id: moving.accountId, video_url: "https://videos.test/d.mp4" });
    // The worker dies as it announces the failure: the final write is made, the announcement is not.
    const dying = { send: async () => Promise.reject(new Error("worker killed")) } as unknown as Producer;
    const gone = { find: async () => undefined } as unknown as ConnectedAccounts;
    await expect(run(id, { producer: dying, connected: gone })).rejects.toThrow("worker killed");
    const failed = await readPublication(redis(), "moveco", id);
    expect(failed?.status).toBe("FAILED");
    // The client retries before the message is read again; the redelivery then finds it QUEUED.
    const { announced, producer } = announcer();
    // The web's producer: its announcement kept, the work message (reels topic) let go.
    const web = {
      send: async (record: { topic: string }) =>
        record.topic === TOPICS.reelEvents.name ? producer.send(record as never) : [],
    } as unknown as Producer;
    await retryPublication({ redis: redis(), producer: async () => web }, "moveco", id);
    expect(await run(id, { producer, connected: gone })).toBe("failed");
    for (const announcement of announced) await enqueuePublicationEvent(redis(), connected(), announcement);
    // Both failures, in the order they happened (deliveries queued in one millisecond come in id order).
    const bodies = (await queuedBodies("moveco", id)).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(bodies.map((b) => [b.type, b.timestamp])).toEqual([
      ["reel.failed", failed!.updated_at],
      ["reel.failed", (await readPublication(redis(), "moveco", id))!.updated_at],
    ]);
    expect(bodies[0].data).toEqual(failed);
  });

  it("announces the latest polls and steps of a long timeline, and its webhook carries those", async () => {
    await createWebhook(
      redis(),
      "reelco",
      { url: "https://hooks.example.com/long", events: ["reel.needs_attention"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const id = await submit("reelco", { account_id: account.accountId, video_url: "https://videos.test/l.mp4" });
    // A container watched once a minute for its 24 h life, then timed out.
    for (let attempt = 1; attempt <= 1_440; attempt++) {
      const poll = { attempt, at: new Date().toISOString(), status_code: "IN_PROGRESS", status: "In Progress" };
      await appendEvent(redis(), id, { status: "PROCESSING", body: { kind: "poll", poll } });
    }
    await appendEvent(redis(), id, step("TIMED_OUT"));
    const view = (await readPublication(redis(), "reelco", id))!;
    const announcement = settledAnnouncement(view);
    expect(announcement.publication).toEqual({
      ...view,
      polls: view.polls.slice(-ANNOUNCED_TIMELINE_ENTRIES),
      steps: view.steps,
    });
    expect(announcement.publication?.polls.at(-1)).toMatchObject({ attempt: 1_440 });
    expect(JSON.stringify(view).length).toBeGreaterThan(150_000);
    expect(JSON.stringify(announcement).length).toBeLessThan(20_000);
    await enqueuePublicationEvent(redis(), connected(), announcement);
    const [delivered] = await queuedBodies("reelco", id);
    expect(delivered).toEqual({
      type: "reel.needs_attention",
      timestamp: view.updated_at,
      data: announcement.publication,
    });
  });
});
