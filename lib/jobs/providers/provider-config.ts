import { z } from "zod";

/**
 * The model servers and prices a deployment configures, parsed from the environment: LLM_PROVIDERS
 * (or the file LLM_PROVIDERS_FILE), the single-provider short form LLM_BASE_URL + LLM_MODELS, and
 * MODEL_PRICES (or MODEL_PRICES_FILE), as lib/config.ts read them from the environment.
 * modelSettings (lib/jobs/list-models.ts) calls these.
 */

/** The name of the request field that caps the completion: OpenAI's newer models refuse the older one. */
export const MAX_TOKENS_PARAMS = ["max_tokens", "max_completion_tokens"] as const;
export type MaxTokensParam = (typeof MAX_TOKENS_PARAMS)[number];

/** The name LLM_BASE_URL + LLM_MODELS get in /v1/models. */
export const SHORT_FORM_PROVIDER = "default";

const providerEntry = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, "a provider's name is 1–64 letters, digits, dots, dashes or underscores"),
    base_url: z.url({
      protocol: /^https?$/,
      message: "base_url must be the server's OpenAI-compatible base URL, e.g. http://localhost:8000/v1",
    }),
    api_key: z.string().min(1).optional(),
    models: z.array(z.string().min(1, "a model name is not empty")).min(1, "list the model names this provider serves"),
    max_tokens_param: z
      .enum(MAX_TOKENS_PARAMS, { message: 'max_tokens_param is "max_tokens" or "max_completion_tokens"' })
      .optional(),
  })
  .strict();

export interface ProviderConfig {
  name: string;
  base_url: string;
  api_key?: string;
  models: string[];
  /** What the provider is sent first; a 400 naming it as unsupported switches to the other (see openai-compatible.ts). */
  max_tokens_param: MaxTokensParam;
}

const price = z
  .object({
    input_per_million: z.number().min(0, "a price is 0 or more USD per million tokens"),
    output_per_million: z.number().min(0, "a price is 0 or more USD per million tokens"),
  })
  .strict();

export type ModelPrice = z.infer<typeof price>;
export type ModelPrices = Record<string, ModelPrice>;

const prices = z.record(z.string().min(1), price);

/** A problem with one variable, reported by modelSettings as a ConfigError `NAME: message`. */
export class SettingError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

export type ReadFile = (path: string) => string;

/**
 * OpenAI's own API wants max_completion_tokens (its reasoning models refuse max_tokens); the
 * servers people run themselves (vLLM, Ollama, llama.cpp) have always taken max_tokens.
 */
export function defaultMaxTokensParam(baseUrl: string): MaxTokensParam {
  return new URL(baseUrl).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens";
}

/** The JSON of a variable or of the file its *_FILE twin names; undefined when neither is set. */
function readJsonSetting(
  name: string,
  value: string | undefined,
  file: string | undefined,
  readFile: ReadFile,
): unknown {
  if (value !== undefined && file !== undefined) throw new SettingError(name, `set ${name} or ${name}_FILE, not both`);
  if (value === undefined && file === undefined) return undefined;
  let text = value;
  const source = file === undefined ? name : `${name}_FILE (${file})`;
  if (file !== undefined) {
    try {
      text = readFile(file);
    } catch (error) {
      throw new SettingError(
        `${name}_FILE`,
        `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  try {
    return JSON.parse(text!);
  } catch {
    throw new SettingError(file === undefined ? name : `${name}_FILE`, `${source} is not valid JSON`);
  }
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}

export interface ProviderSettings {
  LLM_PROVIDERS?: string;
  LLM_PROVIDERS_FILE?: string;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODELS: string[];
}

/**
 * Every configured provider: LLM_PROVIDERS' entries, then the short form as provider "default".
 * A model name routes to one provider, so a name listed twice (or the built-in model's) is refused.
 */
export function resolveProviders(
  settings: ProviderSettings,
  reservedModels: string[],
  readFile: ReadFile,
): ProviderConfig[] {
  const raw = readJsonSetting("LLM_PROVIDERS", settings.LLM_PROVIDERS, settings.LLM_PROVIDERS_FILE, readFile);
  const providers: ProviderConfig[] = [];
  if (raw !== undefined) {
    const parsed = z.array(providerEntry).safeParse(raw);
    if (!parsed.success)
      throw new SettingError(
        "LLM_PROVIDERS",
        `expected [{name, base_url, api_key?, models: [...], max_tokens_param?}]; ${firstIssue(parsed.error)}`,
      );
    for (const entry of parsed.data)
      providers.push({ ...entry, max_tokens_param: entry.max_tokens_param ?? defaultMaxTokensParam(entry.base_url) });
  }
  if (settings.LLM_BASE_URL) {
    if (settings.LLM_MODELS.length === 0)
      throw new SettingError("LLM_MODELS", "list the model names LLM_BASE_URL serves (comma separated)");
    providers.push({
      name: SHORT_FORM_PROVIDER,
      base_url: settings.LLM_BASE_URL,
      api_key: settings.LLM_API_KEY || undefined,
      models: settings.LLM_MODELS,
      max_tokens_param: defaultMaxTokensParam(settings.LLM_BASE_URL),
    });
  }
  const names = new Set<string>();
  const owner = new Map<string, string>(reservedModels.map((m) => [m, "the built-in model"]));
  for (const provider of providers) {
    if (names.has(provider.name))
      throw new SettingError(
        "LLM_PROVIDERS",
        `two providers are named "${provider.name}"${provider.name === SHORT_FORM_PROVIDER ? " (LLM_BASE_URL's provider is named default)" : ""}`,
      );
    names.add(provider.name);
    for (const model of provider.models) {
      const taken = owner.get(model);
      if (taken) {
        const by = taken === "the built-in model" ? taken : `provider "${taken}"`;
        throw new SettingError(
          "LLM_PROVIDERS",
          `model "${model}" is served by both ${by} and provider "${provider.name}"; a model name must route to one provider`,
        );
      }
      owner.set(model, provider.name);
    }
  }
  return providers;
}

/** MODEL_PRICES (or MODEL_PRICES_FILE): USD per million prompt and completion tokens, by model name. */
export function resolvePrices(
  settings: { MODEL_PRICES?: string; MODEL_PRICES_FILE?: string },
  readFile: ReadFile,
): ModelPrices {
  const raw = readJsonSetting("MODEL_PRICES", settings.MODEL_PRICES, settings.MODEL_PRICES_FILE, readFile);
  if (raw === undefined) return {};
  const parsed = prices.safeParse(raw);
  if (!parsed.success)
    throw new SettingError(
      "MODEL_PRICES",
      `expected {"<model>": {"input_per_million": 0.15, "output_per_million": 0.6}}; ${firstIssue(parsed.error)}`,
    );
  return parsed.data;
}
