import { randomUUID } from "node:crypto";
import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TOPICS } from "@/lib/topics";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { expectProblem, parseSse, readTopic } from "../helpers";

/**
 * The jobs API's route handlers, called with real Requests against the real Redis and a broker of
 * this file's own (so it can be stopped). No worker runs here: jobs stay QUEUED.
 */
const ACME = "acme-key-0123456789abcdef";
const GLOBEX = "globex-key-0123456789abcdef";
/** A tenant of the rate-limit case alone, whose jobs no list reads. */
const INITECH = "initech-key-0123456789abcdef";
let broker: MockBroker;
let routes: {
  jobs: typeof import("@/app/v1/jobs/route");
  job: typeof import("@/app/jobs/[id]/route");
  cancel: typeof import("@/app/jobs/[id]/cancel/route");
  stream: typeof import("@/app/jobs/[id]/stream/route");
  models: typeof import("@/app/v1/models/route");
  health: typeof import("@/app/api/health/route");
};

beforeAll(async () => {
  broker = await startMockBroker();
  Object.assign(process.env, {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: broker.bootstrap,
    KAFKA_EMBEDDED: "true",
    API_KEYS: `acme:${ACME},globex:${GLOBEX},initech:${INITECH}`,
    MAX_PROMPT_CHARS: "1000",
  });
  routes = {
    jobs: await import("@/app/v1/jobs/route"),
    job: await import("@/app/jobs/[id]/route"),
    cancel: await import("@/app/jobs/[id]/cancel/route"),
    stream: await import("@/app/jobs/[id]/stream/route"),
    models: await import("@/app/v1/models/route"),
    health: await import("@/app/api/health/route"),
  };
});

afterAll(async () => {
  const { getServices } = await import("@/lib/web/services");
  const services = getServices();
  await (await services.producer()).disconnect().catch(() => {});
  services.redis.disconnect();
  await broker?.stop();
});

const command = (over: Record<string, unknown> = {}) => ({
  tenant_id: "acme",
  model_name: "local-ngram",
  prompt: "Tell me about the log",
  ...over,
});
const submit = (body: unknown, { key = ACME, type = "application/json" } = {}) =>
  routes.jobs.POST(
    new Request("http://dispatch.test/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": type },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
    undefined,
  );
const params = (id: string) => ({ params: Promise.resolve({ id }) });
const getJob = (id: string, key = ACME) =>
  routes.job.GET(
    new Request(`http://dispatch.test/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } }),
    params(id),
  );

describe("POST /v1/jobs", () => {
  it("answers 202 with a UUID v4 only after the command is on the log, keyed by tenant", async () => {
    const response = await submit(command({ prompt: "keyed by tenant" }));
    expect(response.status).toBe(202);
    const body = await response.json();
    expect(body.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body).toEqual({ job_id: body.job_id, status: "QUEUED", stream_url: `/jobs/${body.job_id}/stream` });
    expect(response.headers.get("location")).toBe(`/v1/jobs/${body.job_id}`);

    const messages = await readTopic(broker.bootstrap, TOPICS.requests.name, (m) =>
      m.some((x) => x.value?.toString().includes(body.job_id)),
    );
    const message = messages.find((m) => m.value?.toString().includes(body.job_id))!;
    expect(message.key?.toString()).toBe("acme");
    expect(JSON.parse(message.value!.toString())).toEqual({
      job_id: body.job_id,
      tenant_id: "acme",
      model_name: "local-ngram",
      prompt: "keyed by tenant",
      temperature: 0.2,
      max_tokens: 2048,
      timestamp: expect.stringMatching(/Z$/),
    });

    const job = await (await getJob(body.job_id)).json();
    expect(job).toMatchObject({
      job_id: body.job_id,
      tenant_id: "acme",
      status: "QUEUED",
      finish_reason: null,
      output: "",
      attempts: 0,
    });
  });

  it("is idempotent by job_id: same body 200 with the job and no second event, different body 409", async () => {
    const job_id = randomUUID();
    const first = await submit(command({ job_id, prompt: "once" }));
    expect(first.status).toBe(202);
    const again = await submit(command({ job_id, prompt: "once" }));
    expect(again.status).toBe(200);
    expect((await again.json()).job_id).toBe(job_id);
    const other = await submit(command({ job_id, prompt: "twice" }));
    expect(other.status).toBe(409);
    const byOtherTenant = await submit(command({ job_id, tenant_id: "globex", prompt: "once" }), { key: GLOBEX });
    expect(byOtherTenant.status).toBe(409);

    const marker = await submit(command({ prompt: "marker after the idempotency checks" }));
    const markerId = (await marker.json()).job_id;
    const messages = await readTopic(broker.bootstrap, TOPICS.requests.name, (m) =>
      m.some((x) => x.value?.toString().includes(markerId)),
    );
    expect(messages.filter((m) => m.value?.toString().includes(job_id))).toHaveLength(1);
  });

  it.each([
    ["400 for JSON that does not parse", () => submit("{nope"), 400, undefined],
    [
      "401 without a key",
      () =>
        routes.jobs.POST(
          new Request("http://x/v1/jobs", {
            method: "POST",
            body: "{}",
            headers: { "content-type": "application/json" },
          }),
          undefined,
        ),
      401,
      undefined,
    ],
    ["401 for an unknown key", () => submit(command(), { key: "unknown-key-0123456789abcdef" }), 401, undefined],
    ["403 for another tenant's tenant_id", () => submit(command({ tenant_id: "globex" })), 403, undefined],
    ["413 for a body over 1 MiB", () => submit(command({ prompt: "x".repeat(1024 * 1024 + 10) })), 413, undefined],
    [
      "415 for a body that is not JSON",
      () => submit("tenant_id=acme", { type: "application/x-www-form-urlencoded" }),
      415,
      undefined,
    ],
    ["422 for an unknown field", () => submit(command({ priority: 1 })), 422, "priority"],
    ["422 for an unknown model", () => submit(command({ model_name: "gpt-17" })), 422, "model_name"],
    ["422 for a prompt over MAX_PROMPT_CHARS", () => submit(command({ prompt: "x".repeat(1001) })), 422, "prompt"],
    ["422 for temperature out of range", () => submit(command({ temperature: 3 })), 422, "temperature"],
    ["422 for max_tokens out of range", () => submit(command({ max_tokens: 0 })), 422, "max_tokens"],
    ["422 for a bad job_id", () => submit(command({ job_id: "abc" })), 422, "job_id"],
    ["422 for a bad timestamp", () => submit(command({ timestamp: "yesterday" })), 422, "timestamp"],
    ["422 for a missing prompt", () => submit({ tenant_id: "acme", model_name: "local-ngram" }), 422, "prompt"],
    ["422 for a prompt of only whitespace", () => submit(command({ prompt: "  \n\t " })), 422, "prompt"],
    ["422 for an array body", () => submit([]), 422, "(body)"],
  ])("answers %s, as problem+json", async (_name, call, status, path) => {
    const response = await call();
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const problem = await response.json();
    expect(problem).toMatchObject({
      status,
      title: expect.any(String),
      detail: expect.any(String),
      type: expect.stringMatching(/^\/problems\//),
    });
    if (path !== undefined) expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("refuses a prompt of only whitespace and says each problem in people's words, at its field", async () => {
    const job_id = randomUUID();
    const response = await submit(command({ job_id, prompt: "   ", temperature: 3, max_tokens: 1.5, priority: 1 }));
    const problem = await expectProblem(response, 422);
    expect(problem.errors).toEqual([
      { path: "prompt", message: "Enter a prompt" },
      { path: "temperature", message: "Temperature is between 0 and 2" },
      { path: "max_tokens", message: "Max tokens must be a whole number" },
      { path: "priority", message: "priority is not a known field" },
    ]);
    expect((await getJob(job_id)).status).toBe(404);
    const unknownModel = await expectProblem(await submit(command({ model_name: "gpt-17" })), 422);
    expect(unknownModel.errors).toEqual([
      { path: "model_name", message: 'There is no model "gpt-17"; choose one of: local-ngram' },
    ]);
  });

  it("answers 429 with Retry-After to a tenant over RATE_LIMIT_PER_MINUTE, hands out no job, and takes no budget for a refused body", async () => {
    const redis = new Redis(inject("redisUrl"));
    try {
      // Initech's budget (600 a minute, a minute's burst) used up until two minutes from now.
      await redis.set("ratelimit:submit:initech", Date.now() + 120_000, "PX", 180_000);
      const job_id = randomUUID();
      const over = await submit(command({ tenant_id: "initech", job_id }), { key: INITECH });
      expect((await expectProblem(over, 429)).detail).toMatch(/at most 600 a minute/);
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(59);
      expect((await getJob(job_id, INITECH)).status).toBe(404);

      await redis.del("ratelimit:submit:initech");
      await expectProblem(await submit(command({ tenant_id: "initech", max_tokens: 0 }), { key: INITECH }), 422);
      await expectProblem(await submit(command({ tenant_id: "initech", model_name: "gpt-17" }), { key: INITECH }), 422);
      expect(await redis.exists("ratelimit:submit:initech")).toBe(0);
      expect((await submit(command({ tenant_id: "initech", job_id }), { key: INITECH })).status).toBe(202);
      expect(await redis.exists("ratelimit:submit:initech")).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it("answers 503 with Retry-After within a few seconds when the broker is down, hands out no job, and recovers", async () => {
    const job_id = randomUUID();
    await broker.down();
    try {
      const started = Date.now();
      const response = await submit(command({ job_id, prompt: "while the broker is down" }));
      const took = Date.now() - started;
      expect(response.status).toBe(503);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(JSON.stringify(await response.json())).not.toContain(job_id);
      expect(took).toBeLessThan(6000);
      expect((await getJob(job_id)).status).toBe(404);
    } finally {
      await broker.up();
    }
    const after = await submit(command({ job_id, prompt: "while the broker is down" }));
    expect(after.status).toBe(202);
  });
});

describe("reading jobs", () => {
  it("hides other tenants' jobs and non-ids behind 404", async () => {
    const { job_id } = await (await submit(command())).json();
    expect((await getJob(job_id, GLOBEX)).status).toBe(404);
    expect((await getJob(randomUUID())).status).toBe(404);
    expect((await getJob("../../etc/passwd")).status).toBe(404);
    const stream = await routes.stream.GET(
      new Request(`http://x/jobs/${job_id}/stream`, { headers: { authorization: `Bearer ${GLOBEX}` } }),
      params(job_id),
    );
    expect(stream.status).toBe(404);
    const cancel = await routes.cancel.POST(
      new Request(`http://x/jobs/${job_id}/cancel`, { method: "POST", headers: { authorization: `Bearer ${GLOBEX}` } }),
      params(job_id),
    );
    expect(cancel.status).toBe(404);
  });

  it("lists the tenant's jobs newest first, with a cursor", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await (await submit(command({ tenant_id: "globex", prompt: `list ${i}` }), { key: GLOBEX })).json()).job_id,
      );
    const list = (url: string) =>
      routes.jobs
        .GET(new Request(url, { headers: { authorization: `Bearer ${GLOBEX}` } }), undefined)
        .then((r) => r.json());
    const first = await list("http://x/v1/jobs?limit=2");
    expect(first.data.map((j: { job_id: string }) => j.job_id)).toEqual([ids[2], ids[1]]);
    const second = await list(`http://x/v1/jobs?limit=2&cursor=${first.next_cursor}`);
    expect(second.data.map((j: { job_id: string }) => j.job_id)).toEqual([ids[0]]);
    expect(second.next_cursor).toBeNull();
    const bad = await routes.jobs.GET(
      new Request("http://x/v1/jobs?limit=1000", { headers: { authorization: `Bearer ${GLOBEX}` } }),
      undefined,
    );
    expect(bad.status).toBe(422);
  });

  it("cancels a queued job at once, idempotently, and its stream replays the end", async () => {
    const { job_id } = await (await submit(command())).json();
    const cancel = () =>
      routes.cancel.POST(
        new Request(`http://x/jobs/${job_id}/cancel`, { method: "POST", headers: { authorization: `Bearer ${ACME}` } }),
        params(job_id),
      );
    expect(await (await cancel()).json()).toMatchObject({ status: "CANCELLED", finish_reason: "cancelled" });
    expect(await (await cancel()).json()).toMatchObject({ status: "CANCELLED", finish_reason: "cancelled" });
    const stream = await routes.stream.GET(
      new Request(`http://x/jobs/${job_id}/stream`, { headers: { authorization: `Bearer ${ACME}` } }),
      params(job_id),
    );
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSse(await stream.text());
    expect(events.map((e) => JSON.parse(e.data))).toEqual([
      { delta: "", is_final: true, status: "CANCELLED", finish_reason: "cancelled" },
    ]);
  });

  it("lists the models and reports health", async () => {
    const models = await (
      await routes.models.GET(
        new Request("http://x/v1/models", { headers: { authorization: `Bearer ${ACME}` } }),
        undefined,
      )
    ).json();
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(["local-ngram"]);
    const health = await routes.health.GET(new Request("http://x/api/health"), undefined);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", redis: { ok: true }, kafka: { ok: true } });
    await broker.down();
    try {
      const down = await routes.health.GET(new Request("http://x/api/health"), undefined);
      expect(down.status).toBe(503);
      expect((await down.json()).failing).toEqual(["kafka"]);
    } finally {
      await broker.up();
    }
  });
});
