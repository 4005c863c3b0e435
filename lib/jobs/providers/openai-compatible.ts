import OpenAI from "openai";
import { PermanentProviderError, type GenerationChunk, type GenerationRequest, type Provider } from "./provider";

/**
 * Any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, OpenAI) through the official SDK,
 * streaming chat completions. The SDK retries connection errors and 429/5xx before the stream starts.
 */
export function createOpenAICompatible(options: { baseURL: string; apiKey?: string; fetch?: typeof fetch }): Provider {
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey || "not-needed", maxRetries: 2, timeout: 120_000, fetch: options.fetch });
  return {
    async *generate(request: GenerationRequest): AsyncIterable<GenerationChunk> {
      let stream;
      try {
        stream = await client.chat.completions.create(
          {
            model: request.model,
            messages: [{ role: "user", content: request.prompt }],
            temperature: request.temperature,
            max_tokens: request.maxTokens,
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal: request.signal },
        );
      } catch (error) {
        // 4xx other than 408/429 will not get better by retrying the same request.
        if (error instanceof OpenAI.APIError && error.status && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429) {
          throw new PermanentProviderError(`the model server refused the request (${error.status}): ${error.message}`);
        }
        throw error;
      }
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.content;
        if (delta) yield { delta };
        // Anything but "length" (a content filter, a tool call) still ended the text on the model's side.
        const finish = chunk.choices[0]?.finish_reason;
        if (finish) yield { finish_reason: finish === "length" ? "length" : "stop" };
        if (chunk.usage) yield { usage: { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens } };
      }
    },
  };
}
