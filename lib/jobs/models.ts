import type { Config } from "../config";
import type { ModelInfo } from "./providers/provider";

export const LOCAL_MODEL = "local-ngram";
export const LOCAL_MODEL_VERSION = "local-ngram-1 (token trigrams, back-off, o200k_base BPE)";

/** The models this deployment serves: the built-in one, and the names LLM_MODELS lists for LLM_BASE_URL. */
export function listModels(config: Pick<Config, "LLM_BASE_URL" | "LLM_MODELS">): ModelInfo[] {
  const models: ModelInfo[] = [
    {
      id: LOCAL_MODEL,
      provider: "local",
      version: LOCAL_MODEL_VERSION,
      description: "A small statistical model trained at start-up on Dispatch's own docs and the prompt. It continues text; it does not follow instructions.",
      price: { input_per_million: 0, output_per_million: 0 },
    },
  ];
  if (config.LLM_BASE_URL) {
    for (const id of config.LLM_MODELS) {
      models.push({
        id,
        provider: "openai-compatible",
        version: id,
        description: `Served by the OpenAI-compatible server at ${new URL(config.LLM_BASE_URL).host}.`,
        price: { input_per_million: 0, output_per_million: 0 },
      });
    }
  }
  return models;
}

export function costOf(model: ModelInfo | undefined, usage: { prompt_tokens: number; completion_tokens: number }) {
  const input = model?.price.input_per_million ?? 0;
  const output = model?.price.output_per_million ?? 0;
  const amount = (usage.prompt_tokens * input + usage.completion_tokens * output) / 1_000_000;
  return { currency: "USD", amount: Math.round(amount * 1e6) / 1e6 };
}
