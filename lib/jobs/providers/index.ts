import type { Config } from "../../config";
import { LOCAL_MODEL } from "../models";
import { modelSettings } from "../list-models";
import { createLocalNgram, readShippedCorpus } from "./local-ngram";
import { createOpenAICompatible } from "./openai-compatible";
import type { Provider } from "./provider";

/** The providers a worker serves, by model name; local-ngram is trained once here, at start-up. */
export function createProviders(config: Config): (modelName: string) => Provider | undefined {
  const byModel = new Map<string, Provider>([
    [
      LOCAL_MODEL,
      createLocalNgram({ corpus: readShippedCorpus(), tokensPerSecond: config.LOCAL_MODEL_TOKENS_PER_SECOND }),
    ],
  ]);
  for (const provider of modelSettings(config).providers) {
    const client = createOpenAICompatible({
      baseURL: provider.base_url,
      apiKey: provider.api_key,
      maxTokensParam: provider.max_tokens_param,
    });
    for (const model of provider.models) byModel.set(model, client);
  }
  return (name) => byModel.get(name);
}
