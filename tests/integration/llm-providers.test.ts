import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import Redis from "ioredis";
import { jobKeys } from "@/lib/jobs/keys";
import { isFinalJob } from "@/lib/jobs/status";
import { TOPICS } from "@/lib/topics";
import {
  closeWebServices,
  readTopic,
  spawnWorker,
  stopWorker,
  waitFor,
  waitForWholeGroup,
  type WorkerProcess,
} from "../helpers";

/**
 * One deployment, two OpenAI-compatible providers: a real worker process routes each model to its
 * server (two streaming servers on 127.0.0.1, one answering like OpenAI, one like vLLM), reports
 * the server's usage, and prices the job from MODEL_PRICES, or says it has no price.
 */
const TENANT = "providers";
const KEY = `${TENANT}-key-0123456789abcdef`;
const PRICES = {
  "gpt-4o-mini": { input_per_million: 0.15, output_per_million: 0.6 },
  "gpt-5-mini": { input_per_million: 0.25, output_per_million: 2 },
};

interface Seen {
  auth?: string;
  body: Record<string, unknown>;
  status: number;
}

/** A streaming chat-completions server whose words and usage are its own; models starting "gpt-5" refuse max_tokens, as OpenAI's do. */
async function modelServer(words: string[], usage: { prompt_tokens: number; completion_tokens: number }) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      if (req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      if (String(body.model).startsWith("gpt-5") && "max_tokens" in body) {
        seen.push({ auth: req.headers.authorization, body, status: 400 });
        res.writeHead(400, { "content-type": "application/json" });
        const message =
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
        return void res.end(
          JSON.stringify({
            error: { message, type: "invalid_request_error", param: "max_tokens", code: "unsupported_parameter" },
          }),
        );
      }
      seen.push({ auth: req.headers.authorization, body, status: 200 });
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: body.model, choices, ...extra })}\n\n`;
      res.write(chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
      let i = 0;
      const timer = setInterval(() => {
        if (i < words.length)
          return void res.write(chunk([{ index: 0, delta: { content: words[i++] }, finish_reason: null }]));
        clearInterval(timer);
        res.write(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
        res.write(chunk([], { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }));
        res.end("data: [DONE]\n\n");
      }, 5);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, seen, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

let openai: Awaited<ReturnType<typeof modelServer>>;
let vllm: Awaited<ReturnType<typeof modelServer>>;
let redis: Redis;
let worker: WorkerProcess;
let routes: {
  jobs: typeof import("@/app/v1/jobs/route");
  job: typeof import("@/app/jobs/[id]/route");
  models: typeof import("@/app/v1/models/route");
};

beforeAll(async () => {
  openai = await modelServer(["Partitions", " order", " the", " log", "."], {
    prompt_tokens: 12,
    completion_tokens: 5,
  });
  vllm = await modelServer(["Qwen", " says", " hello", "."], { prompt_tokens: 9, completion_tokens: 4 });
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `${TENANT}:${KEY}`,
    LLM_PROVIDERS: JSON.stringify([
      { name: "openai", base_url: openai.baseURL, api_key: "sk-openai-test", models: ["gpt-4o-mini", "gpt-5-mini"] },
      { name: "vllm", base_url: vllm.baseURL, models: ["qwen2.5"] },
    ]),
    MODEL_PRICES: JSON.stringify(PRICES),
  };
  Object.assign(process.env, env);
  redis = new Redis(env.REDIS_URL);
  routes = {
    jobs: await import("@/app/v1/jobs/route"),
    job: await import("@/app/jobs/[id]/route"),
    models: await import("@/app/v1/models/route"),
  };
  worker = spawnWorker(env, "worker-providers");
  await waitForWholeGroup(redis, worker);
});

afterAll(async () => {
  await stopWorker(worker);
  await closeWebServices();
  redis.disconnect();
  await Promise.all([openai, vllm].map((s) => new Promise<void>((r) => s.server.close(() => r()))));
});

const auth = { authorization: `Bearer ${KEY}` };
async function run(model: string): Promise<Record<string, unknown>> {
  const body = {
    tenant_id: TENANT,
    model_name: model,
    prompt: "What orders the log?",
    temperature: 0.2,
    max_tokens: 64,
  };
  const response = await routes.jobs.POST(
    new Request("http://x/v1/jobs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  const { job_id: id } = await response.json();
  await waitFor(async () => isFinalJob(await redis.hget(jobKeys.state(id), "status")), {
    timeoutMs: 60_000,
    what: `job ${id} on ${model}`,
  });
  return (
    await routes.job.GET(new Request(`http://x/jobs/${id}`, { headers: auth }), { params: Promise.resolve({ id }) })
  ).json();
}
const auditOf = async (id: string) => {
  const messages = await readTopic(inject("kafkaBrokers"), TOPICS.completed.name, (m) =>
    m.some((x) => JSON.parse(x.value!.toString()).job_id === id),
  );
  return messages.map((x) => JSON.parse(x.value!.toString())).find((e) => e.job_id === id);
};

describe("several OpenAI-compatible providers", () => {
  it("lists every model with its provider and price", async () => {
    const response = await routes.models.GET(new Request("http://x/v1/models", { headers: auth }), undefined);
    const { data } = await response.json();
    expect(data.map((m: { id: string; provider: string; price: unknown }) => [m.id, m.provider, m.price])).toEqual([
      ["local-ngram", "local", { input_per_million: 0, output_per_million: 0 }],
      ["gpt-4o-mini", "openai", PRICES["gpt-4o-mini"]],
      ["gpt-5-mini", "openai", PRICES["gpt-5-mini"]],
      ["qwen2.5", "vllm", null],
    ]);
  });

  it("runs a priced model on the first provider, with its usage and cost, in the job and its audit event", async () => {
    const from = openai.seen.length;
    const job = await run("gpt-4o-mini");
    expect(job).toMatchObject({
      status: "COMPLETED",
      output: "Partitions order the log.",
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
    // 12 × 0.15 ÷ 10⁶ + 5 × 0.6 ÷ 10⁶
    expect(job.cost).toEqual({ currency: "USD", amount: 0.0000048 });
    expect(job.cost_note).toBeNull();
    expect(openai.seen.slice(from).map((s) => [s.body.model, s.auth, s.body.max_tokens, s.status])).toEqual([
      ["gpt-4o-mini", "Bearer sk-openai-test", 64, 200],
    ]);
    expect(vllm.seen.filter((s) => s.body.model === "gpt-4o-mini")).toEqual([]);
    expect(await auditOf(job.job_id as string)).toMatchObject({
      model_name: "gpt-4o-mini",
      usage: job.usage,
      cost: job.cost,
      cost_note: null,
    });
  });

  it("runs an unpriced model on the second provider: no cost, and the job says why", async () => {
    const from = vllm.seen.length;
    const job = await run("qwen2.5");
    expect(job).toMatchObject({
      status: "COMPLETED",
      output: "Qwen says hello.",
      usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    });
    expect(job.cost).toBeNull();
    expect(job.cost_note).toBe("No price is configured for model qwen2.5");
    expect(vllm.seen.slice(from).map((s) => [s.body.model, s.auth, s.body.max_tokens])).toEqual([
      ["qwen2.5", "Bearer not-needed", 64],
    ]);
    expect(await auditOf(job.job_id as string)).toMatchObject({
      model_name: "qwen2.5",
      cost: null,
      cost_note: "No price is configured for model qwen2.5",
    });
  });

  it("sends max_completion_tokens to a model that refuses max_tokens, and is charged at its price", async () => {
    const from = openai.seen.length;
    const job = await run("gpt-5-mini");
    expect(job).toMatchObject({ status: "COMPLETED", output: "Partitions order the log.", attempts: 1 });
    // 12 × 0.25 ÷ 10⁶ + 5 × 2 ÷ 10⁶
    expect(job.cost).toEqual({ currency: "USD", amount: 0.000013 });
    const requests = openai.seen.slice(from).map((s) => [s.body.max_tokens, s.body.max_completion_tokens, s.status]);
    expect(requests).toEqual([
      [64, undefined, 400],
      [undefined, 64, 200],
    ]);
    const again = openai.seen.length;
    await run("gpt-5-mini");
    expect(openai.seen.slice(again).map((s) => [s.body.max_tokens, s.body.max_completion_tokens, s.status])).toEqual([
      [undefined, 64, 200],
    ]);
  });
});
