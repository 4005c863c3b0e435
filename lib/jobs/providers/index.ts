import type { Config } from "../../config";
import { LOCAL_MODEL, listModels } from "../models";
import { createLocalNgram, readShippedCorpus } from "./local-ngram";
import { createOpenAICompatible } from "./openai-compatible";
import type { Provider } from "./provider";

/** The providers a worker serves, by model name; local-ngram is trained once here, at start-up. */
export function createProviders(config: Config): (modelName: string) => Provider | undefined {
  const local = createLocalNgram({ corpus: readShippedCorpus(), tokensPerSecond: config.LOCAL_MODEL_TOKENS_PER_SECOND });
  const remote = config.LLM_BASE_URL ? createOpenAICompatible({ baseURL: config.LLM_BASE_URL, apiKey: config.LLM_API_KEY }) : undefined;
  const served = new Set(listModels(config).map((m) => m.id));
  return (name) => (name === LOCAL_MODEL ? local : served.has(name) ? remote : undefined);
}
