import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAICompatible, type OpenAICompatibleOptions } from "@/lib/jobs/providers/openai-compatible";
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
      // As OpenAI answers for its reasoning models (o-series, gpt-5), and a server too old for the newer field.
      const refused =
        body.model.startsWith("gpt-5") && "max_tokens" in body
          ? "max_tokens"
          : body.model === "legacy" && "max_completion_tokens" in body
            ? "max_completion_tokens"
            : undefined;
      if (refused) {
        const other = refused === "max_tokens" ? "max_completion_tokens" : "max_tokens";
        res.writeHead(400, { "content-type": "application/json" });
        const message = `Unsupported parameter: '${refused}' is not supported with this model. Use '${other}' instead.`;
        return void res.end(
          JSON.stringify({
            error: { message, type: "invalid_request_error", param: refused, code: "unsupported_parameter" },
          }),
        );
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
        res.write(
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: "length" }] })}\n\n`,
        );
        clearInterval(timer);
        res.write(
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [], usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 } })}\n\n`,
        );
        res.end("data: [DONE]\n\n");
      }, 5);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function collect(model: string, provider = createOpenAICompatible({ baseURL, apiKey: "sk-test" })) {
  const chunks: GenerationChunk[] = [];
  for await (const c of provider.generate({
    model,
    prompt: "What keeps the log?",
    temperature: 0.3,
    maxTokens: 16,
    signal: new AbortController().signal,
  }))
    chunks.push(c);
  return chunks;
}

describe("OpenAI-compatible provider", () => {
  it("streams deltas and reports the server's usage", async () => {
    const chunks = await collect("llama-3.2-1b");
    expect(
      chunks
        .filter((c) => "delta" in c)
        .map((c) => (c as { delta: string }).delta)
        .join(""),
    ).toBe("Kafka keeps the log.");
    expect(chunks.at(-2)).toEqual({ finish_reason: "length" });
    expect(chunks.at(-1)).toEqual({ usage: { prompt_tokens: 7, completion_tokens: 5 } });
    const request = seen.at(-1)!;
    expect(request.auth).toBe("Bearer sk-test");
    expect(request.body).toMatchObject({
      model: "llama-3.2-1b",
      stream: true,
      temperature: 0.3,
      max_tokens: 16,
      messages: [{ role: "user", content: "What keeps the log?" }],
    });
  });

  it("retries an overloaded server before giving up", async () => {
    failuresBeforeSuccess = 2;
    const chunks = await collect("llama-3.2-1b");
    expect(chunks.length).toBeGreaterThan(1);
    expect(failuresBeforeSuccess).toBe(0);
  });

  describe("the token cap's field", () => {
    const text = (chunks: GenerationChunk[]) => chunks.map((c) => ("delta" in c ? c.delta : "")).join("");
    const capFields = (requests: typeof seen) =>
      requests.map((r) => Object.keys(r.body).filter((k) => k === "max_tokens" || k === "max_completion_tokens"));
    const provider = (options: Partial<OpenAICompatibleOptions> = {}) =>
      createOpenAICompatible({ baseURL, apiKey: "sk-test", ...options });

    it("is max_completion_tokens from the first request when the provider says so", async () => {
      const from = seen.length;
      expect(text(await collect("gpt-5-mini", provider({ maxTokensParam: "max_completion_tokens" })))).toBe(
        "Kafka keeps the log.",
      );
      expect(capFields(seen.slice(from))).toEqual([["max_completion_tokens"]]);
      expect(seen.at(-1)!.body.max_completion_tokens).toBe(16);
    });

    it("switches once to max_completion_tokens when the model refuses max_tokens, and remembers it for that model", async () => {
      const shared = provider();
      const from = seen.length;
      const first = await collect("gpt-5-mini", shared);
      expect(text(first)).toBe("Kafka keeps the log.");
      expect(first.at(-1)).toEqual({ usage: { prompt_tokens: 7, completion_tokens: 5 } });
      await collect("gpt-5-mini", shared);
      await collect("llama-3.2-1b", shared);
      expect(capFields(seen.slice(from))).toEqual([
        ["max_tokens"],
        ["max_completion_tokens"],
        ["max_completion_tokens"],
        ["max_tokens"],
      ]);
    });

    it("switches back to max_tokens for a server that refuses the newer field", async () => {
      const from = seen.length;
      expect(text(await collect("legacy", provider({ maxTokensParam: "max_completion_tokens" })))).toBe(
        "Kafka keeps the log.",
      );
      expect(capFields(seen.slice(from))).toEqual([["max_completion_tokens"], ["max_tokens"]]);
    });
  });

  it("fails permanently for a model the server does not have", async () => {
    await expect(collect("missing")).rejects.toBeInstanceOf(PermanentProviderError);
  });
});
