import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAICompatible } from "@/lib/jobs/providers/openai-compatible";
import { PermanentProviderError, type GenerationChunk } from "@/lib/jobs/providers/provider";

/**
 * The OpenAI-compatible provider against a small local server that speaks the streaming
 * chat-completions format of vLLM, Ollama, llama.cpp's server and OpenAI (data: lines, [DONE]).
 */
let server: http.Server;
let baseURL: string;
const seen: { auth?: string; body: Record<string, unknown> }[] = [];
let failuresBeforeSuccess = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      seen.push({ auth: req.headers.authorization, body });
      if (req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      if (body.model === "missing") {
        res.writeHead(404, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ error: { message: "model not found", type: "invalid_request_error" } }));
      }
      if (failuresBeforeSuccess > 0) {
        failuresBeforeSuccess--;
        res.writeHead(503, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ error: { message: "overloaded" } }));
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const words = ["Kafka", " keeps", " the", " log", "."];
      const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      let i = 0;
      const timer = setInterval(() => {
        if (i < words.length) return void res.write(chunk({ content: words[i++] }));
        res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: "length" }] })}\n\n`);
        clearInterval(timer);
        res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [], usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 } })}\n\n`);
        res.end("data: [DONE]\n\n");
      }, 5);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function collect(model: string) {
  const provider = createOpenAICompatible({ baseURL, apiKey: "sk-test" });
  const chunks: GenerationChunk[] = [];
  for await (const c of provider.generate({ model, prompt: "What keeps the log?", temperature: 0.3, maxTokens: 16, signal: new AbortController().signal })) chunks.push(c);
  return chunks;
}

describe("OpenAI-compatible provider", () => {
  it("streams deltas and reports the server's usage", async () => {
    const chunks = await collect("llama-3.2-1b");
    expect(chunks.filter((c) => "delta" in c).map((c) => (c as { delta: string }).delta).join("")).toBe("Kafka keeps the log.");
    expect(chunks.at(-2)).toEqual({ finish_reason: "length" });
    expect(chunks.at(-1)).toEqual({ usage: { prompt_tokens: 7, completion_tokens: 5 } });
    const request = seen.at(-1)!;
    expect(request.auth).toBe("Bearer sk-test");
    expect(request.body).toMatchObject({ model: "llama-3.2-1b", stream: true, temperature: 0.3, max_tokens: 16, messages: [{ role: "user", content: "What keeps the log?" }] });
  });

  it("retries an overloaded server before giving up", async () => {
    failuresBeforeSuccess = 2;
    const chunks = await collect("llama-3.2-1b");
    expect(chunks.length).toBeGreaterThan(1);
    expect(failuresBeforeSuccess).toBe(0);
  });

  it("fails permanently for a model the server does not have", async () => {
    await expect(collect("missing")).rejects.toBeInstanceOf(PermanentProviderError);
  });
});
