import { readFileSync } from "node:fs";
import { ConfigError, type Config } from "../config";
import { FREE, LOCAL_MODEL, LOCAL_MODEL_VERSION } from "./models";
import type { ModelInfo } from "./providers/provider";
import {
  resolvePrices,
  resolveProviders,
  SettingError,
  type ModelPrices,
  type ProviderConfig,
  type ReadFile,
} from "./providers/provider-config";

/** The configuration's model settings, as parseConfig gives them (JSON text, or the files that hold it). */
export type ModelSettingsSource = Pick<
  Config,
  | "LLM_PROVIDERS"
  | "LLM_PROVIDERS_FILE"
  | "LLM_BASE_URL"
  | "LLM_API_KEY"
  | "LLM_MODELS"
  | "MODEL_PRICES"
  | "MODEL_PRICES_FILE"
>;

export interface ModelSettings {
  /** LLM_PROVIDERS (or its file) and the short form LLM_BASE_URL + LLM_MODELS, each model name routed to one. */
  providers: ProviderConfig[];
  /** MODEL_PRICES (or its file). */
  prices: ModelPrices;
}

const resolved = new WeakMap<ModelSettingsSource, ModelSettings>();

/**
 * The model servers and prices a configuration names, resolved once per configuration object.
 * A bad one throws a ConfigError naming the variable, as parseConfig does for the others; `npm
 * start` and the worker call this at start-up, so it stops them there. `readFile` reads the *_FILE settings.
 */
export function modelSettings(
  config: ModelSettingsSource,
  readFile: ReadFile = (file) => readFileSync(file, "utf8"),
): ModelSettings {
  const known = resolved.get(config);
  if (known) return known;
  try {
    const settings = {
      providers: resolveProviders(config, [LOCAL_MODEL], readFile),
      prices: resolvePrices(config, readFile),
    };
    resolved.set(config, settings);
    return settings;
  } catch (error) {
    if (error instanceof SettingError)
      throw new ConfigError(`Invalid configuration:\n  ${error.variable}: ${error.message}`);
    throw error;
  }
}

/** The models this deployment serves: the built-in one, then each provider's, with its price (null when none is configured). */
export function listModels(config: ModelSettingsSource): ModelInfo[] {
  const { providers, prices } = modelSettings(config);
  const models: ModelInfo[] = [
    {
      id: LOCAL_MODEL,
      provider: "local",
      version: LOCAL_MODEL_VERSION,
      description:
        "A small statistical model trained at start-up on Dispatch's own docs and the prompt. It continues text; it does not follow instructions.",
      price: prices[LOCAL_MODEL] ?? FREE,
    },
  ];
  for (const provider of providers) {
    for (const id of provider.models) {
      models.push({
        id,
        provider: provider.name,
        version: id,
        description: `Served by the OpenAI-compatible server at ${new URL(provider.base_url).host} (provider ${provider.name}).`,
        price: prices[id] ?? null,
      });
    }
  }
  return models;
}
