import OpenAI from "openai";
import { PermanentProviderError, type GenerationChunk, type GenerationRequest, type Provider } from "./provider";
import type { MaxTokensParam } from "./provider-config";

export interface OpenAICompatibleOptions {
  baseURL: string;
  apiKey?: string;
  /** The field that caps the completion, sent first; default max_tokens. */
  maxTokensParam?: MaxTokensParam;
  fetch?: typeof fetch;
}

const other = (param: MaxTokensParam): MaxTokensParam =>
  param === "max_tokens" ? "max_completion_tokens" : "max_tokens";

/**
 * OpenAI answers a model that refuses a field with 400 `{"error": {"code": "unsupported_parameter",
 * "param": "max_tokens", "message": "Unsupported parameter: 'max_tokens' is not supported with this
 * model. Use 'max_completion_tokens' instead."}}`.
 */
function refusesParam(error: unknown, param: MaxTokensParam): boolean {
  if (!(error instanceof OpenAI.APIError) || error.status !== 400) return false;
  if (error.param === param)
    return error.code === "unsupported_parameter" || error.code === undefined || error.code === null;
  return error.code === "unsupported_parameter" && error.message.includes(`'${param}'`);
}

/** 4xx other than 408/429 will not get better by retrying the same request. */
function isPermanentRefusal(error: unknown): error is InstanceType<typeof OpenAI.APIError> {
  return (
    error instanceof OpenAI.APIError &&
    !!error.status &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 408 &&
    error.status !== 429
  );
}

/**
 * Any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, OpenAI) through the official SDK,
 * streaming chat completions. The SDK retries connection errors and 429/5xx before the stream starts.
 * A model that refuses the token-cap field gets the other one, once, and keeps getting it.
 */
export function createOpenAICompatible(options: OpenAICompatibleOptions): Provider {
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey || "not-needed",
    maxRetries: 2,
    timeout: 120_000,
    fetch: options.fetch,
  });
  const configured = options.maxTokensParam ?? "max_tokens";
  // Learned per model: one provider may serve models of both generations.
  const learned = new Map<string, MaxTokensParam>();

  const open = (request: GenerationRequest, param: MaxTokensParam) =>
    client.chat.completions.create(
      {
        model: request.model,
        messages: [{ role: "user", content: request.prompt }],
        temperature: request.temperature,
        [param]: request.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal: request.signal },
    );

  return {
    async *generate(request: GenerationRequest): AsyncIterable<GenerationChunk> {
      let stream;
      try {
        const param = learned.get(request.model) ?? configured;
        try {
          stream = await open(request, param);
        } catch (error) {
          if (!refusesParam(error, param)) throw error;
          stream = await open(request, other(param));
          learned.set(request.model, other(param));
        }
      } catch (error) {
        if (isPermanentRefusal(error)) {
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
        if (chunk.usage)
          yield {
            usage: { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens },
          };
      }
    },
  };
}
