import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@/lib/config";
import { costOf, LOCAL_MODEL } from "@/lib/jobs/models";
import { listModels, modelSettings } from "@/lib/jobs/list-models";

/** LLM_PROVIDERS, the short form, MODEL_PRICES (inline or from a file), and what a job costs. */
const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "a:9092",
  API_KEYS: "acme:acme-key-0123456789abcdef",
};
const PROVIDERS = [
  { name: "openai", base_url: "https://api.openai.com/v1", api_key: "sk-test", models: ["gpt-4o-mini", "gpt-5-mini"] },
  { name: "vllm", base_url: "http://vllm:8000/v1", models: ["qwen2.5"] },
];
const PRICES = { "gpt-4o-mini": { input_per_million: 0.15, output_per_million: 0.6 } };
const files = (entries: Record<string, string>) => (file: string) => {
  if (!(file in entries)) throw new Error(`ENOENT: no such file, open '${file}'`);
  return entries[file];
};
/** The model settings of an environment, as start-up resolves them after parseConfig. */
const settingsOf = (env: Record<string, string>, readFile = files({})) =>
  modelSettings(parseConfig({ ...base, ...env }), readFile);
const configError = (env: Record<string, string>, readFile = files({})) => {
  try {
    settingsOf(env, readFile);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
};

describe("providers", () => {
  it("routes each model to its provider and lists them with it", () => {
    const config = parseConfig({
      ...base,
      LLM_PROVIDERS: JSON.stringify(PROVIDERS),
      MODEL_PRICES: JSON.stringify(PRICES),
    });
    expect(modelSettings(config).providers.map((p) => [p.name, p.models, p.max_tokens_param])).toEqual([
      ["openai", ["gpt-4o-mini", "gpt-5-mini"], "max_completion_tokens"],
      ["vllm", ["qwen2.5"], "max_tokens"],
    ]);
    expect(listModels(config).map((m) => [m.id, m.provider, m.price])).toEqual([
      [LOCAL_MODEL, "local", { input_per_million: 0, output_per_million: 0 }],
      ["gpt-4o-mini", "openai", { input_per_million: 0.15, output_per_million: 0.6 }],
      ["gpt-5-mini", "openai", null],
      ["qwen2.5", "vllm", null],
    ]);
  });

  it("reads LLM_PROVIDERS_FILE and MODEL_PRICES_FILE", () => {
    const readFile = files({
      "/etc/dispatch/providers.json": JSON.stringify(PROVIDERS),
      "/etc/dispatch/prices.json": JSON.stringify(PRICES),
    });
    const settings = settingsOf(
      { LLM_PROVIDERS_FILE: "/etc/dispatch/providers.json", MODEL_PRICES_FILE: "/etc/dispatch/prices.json" },
      readFile,
    );
    expect(settings.providers.map((p) => p.name)).toEqual(["openai", "vllm"]);
    expect(settings.prices).toEqual(PRICES);
  });

  it("keeps LLM_BASE_URL + LLM_MODELS as the single-provider short form, next to LLM_PROVIDERS", () => {
    const short = settingsOf({ LLM_BASE_URL: "http://localhost:11434/v1", LLM_MODELS: "llama3.2, phi4" });
    expect(short.providers).toEqual([
      {
        name: "default",
        base_url: "http://localhost:11434/v1",
        api_key: undefined,
        models: ["llama3.2", "phi4"],
        max_tokens_param: "max_tokens",
      },
    ]);
    const both = settingsOf({
      LLM_PROVIDERS: JSON.stringify(PROVIDERS.slice(1)),
      LLM_BASE_URL: "https://api.openai.com/v1",
      LLM_API_KEY: "sk-x",
      LLM_MODELS: "o4-mini",
    });
    expect(both.providers.map((p) => [p.name, p.models, p.api_key, p.max_tokens_param])).toEqual([
      ["vllm", ["qwen2.5"], undefined, "max_tokens"],
      ["default", ["o4-mini"], "sk-x", "max_completion_tokens"],
    ]);
  });

  it("takes max_tokens_param as configured", () => {
    const settings = settingsOf({
      LLM_PROVIDERS: JSON.stringify([{ ...PROVIDERS[1], max_tokens_param: "max_completion_tokens" }]),
    });
    expect(settings.providers[0].max_tokens_param).toBe("max_completion_tokens");
  });

  it.each([
    [
      "a model listed by two providers",
      { LLM_PROVIDERS: JSON.stringify([PROVIDERS[0], { ...PROVIDERS[1], models: ["gpt-4o-mini"] }]) },
      'LLM_PROVIDERS: model "gpt-4o-mini" is served by both provider "openai" and provider "vllm"; a model name must route to one provider',
    ],
    [
      "the short form repeating a listed model",
      { LLM_PROVIDERS: JSON.stringify(PROVIDERS), LLM_BASE_URL: "http://x/v1", LLM_MODELS: "qwen2.5" },
      'model "qwen2.5" is served by both provider "vllm" and provider "default"',
    ],
    [
      "the built-in model's name",
      { LLM_PROVIDERS: JSON.stringify([{ ...PROVIDERS[1], models: [LOCAL_MODEL] }]) },
      `model "${LOCAL_MODEL}" is served by both the built-in model and provider "vllm"`,
    ],
    [
      "two providers of one name",
      { LLM_PROVIDERS: JSON.stringify([PROVIDERS[1], { ...PROVIDERS[1], models: ["other"] }]) },
      'LLM_PROVIDERS: two providers are named "vllm"',
    ],
    ["not JSON", { LLM_PROVIDERS: "[{name: openai}]" }, "LLM_PROVIDERS: LLM_PROVIDERS is not valid JSON"],
    [
      "a provider without models",
      { LLM_PROVIDERS: JSON.stringify([{ name: "x", base_url: "http://x/v1", models: [] }]) },
      "LLM_PROVIDERS: expected [{name, base_url, api_key?, models: [...], max_tokens_param?}]; 0.models: list the model names",
    ],
    [
      "a bad base_url",
      { LLM_PROVIDERS: JSON.stringify([{ name: "x", base_url: "vllm:8000", models: ["m"] }]) },
      "0.base_url: base_url must be",
    ],
    [
      "an unknown field",
      { LLM_PROVIDERS: JSON.stringify([{ ...PROVIDERS[1], baseUrl: "http://x" }]) },
      "LLM_PROVIDERS: expected",
    ],
    [
      "a bad max_tokens_param",
      { LLM_PROVIDERS: JSON.stringify([{ ...PROVIDERS[1], max_tokens_param: "max_new_tokens" }]) },
      'max_tokens_param is "max_tokens" or "max_completion_tokens"',
    ],
    [
      "both the variable and its file",
      { LLM_PROVIDERS: "[]", LLM_PROVIDERS_FILE: "/p.json" },
      "LLM_PROVIDERS: set LLM_PROVIDERS or LLM_PROVIDERS_FILE, not both",
    ],
    [
      "a file that is not there",
      { LLM_PROVIDERS_FILE: "/missing.json" },
      "LLM_PROVIDERS_FILE: cannot read /missing.json: ENOENT",
    ],
    [
      "LLM_BASE_URL without LLM_MODELS",
      { LLM_BASE_URL: "http://localhost:8080/v1" },
      "LLM_MODELS: list the model names LLM_BASE_URL serves",
    ],
    [
      "a negative price",
      { MODEL_PRICES: JSON.stringify({ m: { input_per_million: -1, output_per_million: 0 } }) },
      "MODEL_PRICES: expected",
    ],
    [
      "a price without its output side",
      { MODEL_PRICES: JSON.stringify({ m: { input_per_million: 1 } }) },
      "m.output_per_million",
    ],
    ["prices that are not JSON", { MODEL_PRICES: "gpt-4o-mini=0.15" }, "MODEL_PRICES: MODEL_PRICES is not valid JSON"],
  ])("refuses %s, naming the variable", (_, env, message) => {
    expect(configError(env as Record<string, string>)).toContain(message);
  });
});

describe("cost", () => {
  const config = parseConfig({
    ...base,
    LLM_PROVIDERS: JSON.stringify(PROVIDERS),
    MODEL_PRICES: JSON.stringify(PRICES),
  });
  const model = (id: string) => listModels(config).find((m) => m.id === id);

  it("is prompt × input ÷ 10⁶ + completion × output ÷ 10⁶ in USD at the configured price", () => {
    expect(
      costOf("gpt-4o-mini", model("gpt-4o-mini"), { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 }),
    ).toEqual({ cost: { currency: "USD", amount: 0.75 }, cost_note: null });
    expect(costOf("gpt-4o-mini", model("gpt-4o-mini"), { prompt_tokens: 7, completion_tokens: 5 })).toEqual({
      cost: { currency: "USD", amount: 0.00000405 },
      cost_note: null,
    });
    expect(costOf("gpt-4o-mini", model("gpt-4o-mini"), { prompt_tokens: 1, completion_tokens: 0 }).cost?.amount).toBe(
      0.00000015,
    );
  });

  it("is 0 for the built-in model, which no one bills, and what MODEL_PRICES says when it prices it", () => {
    expect(costOf(LOCAL_MODEL, model(LOCAL_MODEL), { prompt_tokens: 500, completion_tokens: 300 })).toEqual({
      cost: { currency: "USD", amount: 0 },
      cost_note: null,
    });
    const priced = parseConfig({
      ...base,
      MODEL_PRICES: JSON.stringify({ [LOCAL_MODEL]: { input_per_million: 1, output_per_million: 2 } }),
    });
    expect(
      costOf(LOCAL_MODEL, listModels(priced)[0], { prompt_tokens: 500, completion_tokens: 300 }).cost?.amount,
    ).toBe(0.0011);
  });

  it("is null, and says why, for a model without a price or one no provider serves", () => {
    expect(costOf("qwen2.5", model("qwen2.5"), { prompt_tokens: 7, completion_tokens: 5 })).toEqual({
      cost: null,
      cost_note: "No price is configured for model qwen2.5",
    });
    expect(costOf("gone", undefined, { prompt_tokens: 7, completion_tokens: 0 })).toEqual({
      cost: null,
      cost_note: "No price is configured for model gone",
    });
  });
});
