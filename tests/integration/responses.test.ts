import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import OpenAI from "openai";
import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jobKeys } from "@/lib/jobs/keys";
import { parseStreamMessage } from "@/lib/jobs/stream-message";
import { jobIdOf } from "@/lib/responses/ids";
import { TOPICS } from "@/lib/topics";
import { WORKERS_KEY } from "@/lib/live-workers";
import {
  closeWebServices,
  readTopic,
  RESPONSE_EVENT_ORDER,
  ROOT,
  spawnWorker,
  stopWorker,
  waitFor,
  waitForWholeGroup,
  type WorkerProcess,
} from "../helpers";
import { serveRoutes, type RouteServer } from "../route-server";

/**
 * OpenAI's Responses API over Dispatch's jobs, driven by the official openai SDK over real HTTP:
 * the route modules served on a local port, a real worker process, the real Redis and broker.
 * At temperature 0 the built-in model never ends a paragraph, so max_output_tokens ends it: that
 * is how a test holds a job running (a large limit) or knows exactly how it ends (a small one).
 */
const KEYS = {
  acme: "acme-responses-key-0123456789abcdef",
  globex: "globex-responses-key-0123456789abcdef",
  cancel: "cancel-responses-key-0123456789abcdef",
  capped: "capped-responses-key-0123456789abcdef",
};
const MAX_STREAMS = 3;
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();
let redis: Redis;
let server: RouteServer;
let worker: WorkerProcess;
const client = (tenant: keyof typeof KEYS = "acme") =>
  new OpenAI({ apiKey: KEYS[tenant], baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 120_000 });

beforeAll(async () => {
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: Object.entries(KEYS)
      .map(([tenant, key]) => `${tenant}:${key}`)
      .join(","),
    LOCAL_MODEL_TOKENS_PER_SECOND: "200",
    RATE_LIMIT_PER_MINUTE: "0",
    MAX_STREAMS_PER_TENANT: String(MAX_STREAMS),
  };
  Object.assign(process.env, env);
  redis = new Redis(env.REDIS_URL);
  server = await serveRoutes({
    "/v1/responses": await import("@/app/v1/responses/route"),
    "/v1/responses/[id]": await import("@/app/v1/responses/[id]/route"),
    "/v1/responses/[id]/cancel": await import("@/app/v1/responses/[id]/cancel/route"),
    "/v1/models": await import("@/app/v1/models/route"),
    "/v1/models/[id]": await import("@/app/v1/models/[id]/route"),
    "/v1/jobs/[id]": await import("@/app/v1/jobs/[id]/route"),
  });
  worker = spawnWorker(env, "responses-worker");
  await waitForWholeGroup(redis, worker);
});

afterAll(async () => {
  await stopWorker(worker);
  await server.close();
  await closeWebServices();
  redis.disconnect();
});

type Event = {
  type: string;
  sequence_number: number;
  delta?: string;
  text?: string;
  response?: OpenAI.Responses.Response;
};

const readJob = async (responseId: string, tenant: keyof typeof KEYS = "acme") => {
  const response = await fetch(`${server.url}/v1/jobs/${jobIdOf(responseId)}`, {
    headers: { authorization: `Bearer ${KEYS[tenant]}` },
  });
  expect(response.status).toBe(200);
  return response.json();
};

const finished = (id: string, tenant: keyof typeof KEYS = "acme") =>
  waitFor(
    async () => {
      const response = await client(tenant).responses.retrieve(id);
      return ["queued", "in_progress"].includes(response.status ?? "") ? undefined : response;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `response ${id} to finish` },
  );

async function collect(stream: AsyncIterable<unknown>, stop?: (events: Event[]) => boolean): Promise<Event[]> {
  const events: Event[] = [];
  for await (const event of stream) {
    events.push(event as Event);
    if (stop?.(events)) break;
  }
  return events;
}

describe("the Responses API over jobs", () => {
  it("answers a background create at once, queued, and retrieve reaches completed with the job's output; the job is an ordinary one with one audit event", async () => {
    const created = await client().responses.create({
      model: "local-ngram",
      input: "Write two sentences about lighthouses.",
      background: true,
      max_output_tokens: 32_768,
      metadata: { ticket: "T-1" },
    });
    expect(created).toMatchObject({
      object: "response",
      status: "queued",
      background: true,
      model: "local-ngram",
      output: [],
      metadata: { ticket: "T-1" },
      max_output_tokens: 32_768,
    });
    expect(created.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(created.created_at).toBeGreaterThan(1_700_000_000);
    expect(created.created_at).toBeLessThan(Date.now() / 1000 + 1);

    // At temperature 1 the model ends a paragraph within a few hundred tokens: the limit never comes.
    const done = await finished(created.id);
    expect(done.status).toBe("completed");
    expect(done.incomplete_details).toBeNull();
    const job = await readJob(created.id);
    expect(job).toMatchObject({
      status: "COMPLETED",
      finish_reason: "stop",
      tenant_id: "acme",
      prompt: "Write two sentences about lighthouses.",
      temperature: 1,
      max_tokens: 32_768,
    });
    expect(done.output_text).toBe(job.output);
    expect(done.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: job.output, annotations: [], logprobs: [] }],
      },
    ]);
    expect(done.usage).toMatchObject({
      input_tokens: job.usage.prompt_tokens,
      output_tokens: job.usage.completion_tokens,
      total_tokens: job.usage.total_tokens,
    });

    const jobId = jobIdOf(created.id);
    const events = await readTopic(inject("kafkaBrokers"), TOPICS.completed.name, (m) =>
      m.some((x) => x.value?.toString().includes(jobId)),
    );
    expect(events.filter((m) => JSON.parse(m.value!.toString()).job_id === jobId)).toHaveLength(1);
  });

  it("streams the documented events with increasing sequence numbers, and max_output_tokens ends it incomplete with the reason", async () => {
    const stream = await client().responses.create({
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 20,
      background: true,
      stream: true,
    });
    const events = await collect(stream);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const kinds = events
      .map((e) => e.type)
      .filter((type, i, all) => type !== "response.output_text.delta" || all[i - 1] !== type);
    expect(kinds).toEqual([...RESPONSE_EVENT_ORDER, "response.incomplete"]);
    const final = events.at(-1)!.response!;
    expect(final).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    const text = events
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(events.find((e) => e.type === "response.output_text.done")!.text).toBe(text);
    const job = await readJob(final.id);
    expect(job).toMatchObject({ status: "COMPLETED", finish_reason: "length", output: text });
    expect(final.usage!.output_tokens).toBe(20);
  });

  it("resumes a cut stream with starting_after: exactly the rest, no gap, no duplicate", async () => {
    const stream = await client().responses.create({
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 300,
      background: true,
      stream: true,
    });
    const head = await collect(
      stream,
      (events) => events.filter((e) => e.type === "response.output_text.delta").length === 3,
    );
    const last = head.at(-1)!.sequence_number;
    const id = head[0].response!.id;
    const rest = await collect(await client().responses.retrieve(id, { stream: true, starting_after: last }));
    const all = [...head, ...rest];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(rest.at(-1)!.type).toBe("response.incomplete");
    const job = await readJob(id);
    expect(
      all
        .filter((e) => e.type === "response.output_text.delta")
        .map((e) => e.delta)
        .join(""),
    ).toBe(job.output);

    // The same numbers again from any point, once the response has finished.
    const again = await collect(await client().responses.retrieve(id, { stream: true, starting_after: 5 }));
    expect(again.map((e) => [e.sequence_number, e.type])).toEqual(all.slice(6).map((e) => [e.sequence_number, e.type]));
  });

  it("cancels mid-generation: the response is cancelled and the worker stops", async () => {
    const openai = client("cancel");
    // 32,768 tokens of counting: it runs until cancelled, however slow the machine.
    const created = await openai.responses.create({
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 32_768,
      background: true,
    });
    const jobId = jobIdOf(created.id);
    await waitFor(async () => (await redis.llen(jobKeys.events(jobId))) >= 5, {
      timeoutMs: 60_000,
      what: "a few deltas",
    });
    const cancelled = await openai.responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    expect((await openai.responses.cancel(created.id)).status).toBe("cancelled");
    expect((await openai.responses.retrieve(created.id)).status).toBe("cancelled");

    const stored = (await redis.lrange(jobKeys.events(jobId), 0, -1)).map((raw) => parseStreamMessage(raw)!);
    expect(stored.at(-1)).toMatchObject({ is_final: true, status: "CANCELLED", finish_reason: "cancelled" });
    expect(stored.length).toBeLessThan(32_768);
    await waitFor(
      async () => {
        const stats = JSON.parse((await redis.hget(WORKERS_KEY, worker.id))!).stats.generation;
        return !stats.keys.some((k: { key: string; running: number }) => k.key === "cancel" && k.running > 0);
      },
      { what: "the worker to run nothing for the tenant" },
    );
    expect(await redis.llen(jobKeys.events(jobId))).toBe(stored.length);
  });

  it("gives the model the instructions and the messages as its prompt", async () => {
    const created = await client().responses.create({
      model: "local-ngram",
      instructions: "Answer like the docs.",
      input: [
        { role: "user", content: "What keeps the log?" },
        { role: "assistant", content: "Kafka does." },
        { role: "user", content: [{ type: "input_text", text: "And the state?" }] },
      ],
      temperature: 0,
      max_output_tokens: 16,
      background: true,
    });
    expect(created.instructions).toBe("Answer like the docs.");
    const job = await readJob(created.id);
    expect(job.prompt).toBe(
      "Answer like the docs.\n\nUser: What keeps the log?\n\nAssistant: Kafka does.\n\nUser: And the state?",
    );
    expect((await finished(created.id)).status).toBe("incomplete");
  });

  it("without background, waits for the job and answers the finished response, still retrievable by id", async () => {
    const response = await client().responses.create({
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 16,
    });
    expect(response).toMatchObject({ status: "incomplete", background: false });
    expect(response.output_text.length).toBeGreaterThan(0);
    expect((await client().responses.retrieve(response.id)).output_text).toBe(response.output_text);
  });

  it("deletes a response: its job is gone", async () => {
    const created = await client().responses.create({
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 32_768,
      background: true,
    });
    await client().responses.delete(created.id);
    await expect(client().responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // Removed only after the worker's last write (the audit mark): nothing of the job is left behind.
    expect(await redis.exists(jobKeys.state(jobIdOf(created.id)), jobKeys.events(jobIdOf(created.id)))).toBe(0);
  });
});

describe("stream slots", () => {
  it("are held by a stream or a wait and taken before the job: one more is a RateLimitError and makes no job", async () => {
    const openai = client("capped");
    // 32,768 tokens each: the streams stay open until the test drops them.
    const long = {
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 32_768,
      background: true,
      stream: true,
    } as const;
    const streams = await Promise.all(Array.from({ length: MAX_STREAMS }, () => openai.responses.create(long)));
    const jobs = () => redis.zcard(jobKeys.tenantIndex("capped"));
    expect(await jobs()).toBe(MAX_STREAMS);
    for (const request of [
      { ...long, max_output_tokens: 16 },
      { model: "local-ngram", input: CYCLE, max_output_tokens: 16 },
    ]) {
      const refused = await openai.responses.create(request).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect((refused as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("5");
    }
    expect(await jobs()).toBe(MAX_STREAMS);
    // Background without a stream holds no slot.
    expect(
      (await openai.responses.create({ model: "local-ngram", input: CYCLE, max_output_tokens: 16, background: true }))
        .status,
    ).toBe("queued");

    const ids: string[] = [];
    for (const stream of streams) ids.push((await collect(stream, () => true))[0].response!.id);
    for (const id of ids) expect((await openai.responses.cancel(id)).status).toBe("cancelled");
  });
});

describe("errors in OpenAI's shape", () => {
  it("raises AuthenticationError for an unknown key and NotFoundError for an unknown or another tenant's response", async () => {
    const stranger = new OpenAI({ apiKey: "not-a-key-0123456789abcdef", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const unauthorized = await stranger.responses
      .retrieve("resp_00000000000000000000000000000000")
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthorized as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_api_key",
    });

    await expect(client().responses.retrieve("resp_0123456789abcdef0123456789abcdef")).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    await expect(client().responses.retrieve("not-an-id")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const mine = await client().responses.create({
      model: "local-ngram",
      input: CYCLE,
      temperature: 0,
      max_output_tokens: 16,
      background: true,
    });
    await expect(client("globex").responses.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client("globex").responses.cancel(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["tools", { tools: [{ type: "function", name: "f", parameters: {} }] }, "tools"],
    ["reasoning", { reasoning: { effort: "low" } }, "reasoning"],
    ["a JSON schema format", { text: { format: { type: "json_schema", name: "x", schema: {} } } }, "text"],
    ["previous_response_id", { previous_response_id: "resp_1" }, "previous_response_id"],
    ["store false with background", { store: false, background: true }, "store"],
    [
      "an image input",
      { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] },
      "input[0].content[0].type",
    ],
    ["an unknown model", { model: "gpt-17" }, "model"],
    ["too few output tokens", { max_output_tokens: 8 }, "max_output_tokens"],
    ["an unknown field", { priority: 1 }, "priority"],
  ])("refuses %s with a 400 naming the parameter", async (_name, over, param) => {
    const error = await client()
      .responses.create({ model: "local-ngram", input: "hello", background: true, ...over } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: "invalid_request_error",
      param,
      message: expect.stringContaining(param),
    });
  });

  it("answers a method a route lacks with 405 in OpenAI's shape", async () => {
    const response = await fetch(`${server.url}/v1/responses`, {
      method: "PUT",
      headers: { authorization: `Bearer ${KEYS.acme}` },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await response.json()).toEqual({
      error: {
        message: "This endpoint answers POST, OPTIONS.",
        type: "invalid_request_error",
        param: null,
        code: "method_not_allowed",
      },
    });
  });
});

describe("models", () => {
  it("lists and reads the models in OpenAI's shape, keeping the fields the dashboard reads", async () => {
    const page = await client().models.list();
    expect(page.data.map((m) => m.id)).toEqual(["local-ngram"]);
    expect(page.data[0]).toMatchObject({
      object: "model",
      owned_by: "dispatch",
      created: expect.any(Number),
      provider: "local",
      version: expect.any(String),
      description: expect.any(String),
    });
    expect(await client().models.retrieve("local-ngram")).toMatchObject({ id: "local-ngram", object: "model" });
    await expect(client().models.retrieve("gpt-17")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("the README", () => {
  it("has a Node snippet that runs as written: background, stream and resume, cancel", async () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Use the OpenAI SDK"));
    const snippet = /```js\n([\s\S]*?)```/.exec(section)![1];
    const file = path.join(ROOT, ".test-data/readme-responses.mjs");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, snippet);
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      env: { ...process.env, URL: server.url, KEY: KEYS.acme },
      timeout: 90_000,
    });
    // At temperature 1 the model ends a paragraph within a few hundred tokens, far below the 2,048 the snippet allows.
    expect(stdout).toMatch(/^completed /);
    expect(stdout.trimEnd()).toMatch(/cancelled$/);
  });
});
