import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { LOCAL_MODEL } from "./jobs/models";
import { resolvePrices, resolveProviders, SettingError, type ModelPrices, type ProviderConfig, type ReadFile } from "./jobs/providers/provider-config";
import { TENANT_ID_PATTERN } from "./tenant-id";
import { DEFAULT_MAX_PROMPT_CHARS } from "./jobs/status";

/**
 * The environment, validated once. `npm start` fills REDIS_URL, KAFKA_BROKERS and API_KEYS with
 * its embedded parts before it starts the web server and the workers, so here they are required.
 */

const apiKeys = z
  .string()
  .min(1)
  .transform((value, ctx) => {
    const pairs: { tenantId: string; key: string }[] = [];
    for (const item of value.split(",").map((s) => s.trim()).filter(Boolean)) {
      const at = item.indexOf(":");
      const tenant = item.slice(0, at);
      const key = item.slice(at + 1);
      if (at < 1 || !TENANT_ID_PATTERN.test(tenant) || key.length < 16) {
        ctx.addIssue({ code: "custom", message: `"${tenant || item.slice(0, 8)}…" is not tenant_id:key with a key of 16+ characters` });
        return z.NEVER;
      }
      pairs.push({ tenantId: tenant, key });
    }
    return pairs;
  });

const reelAccounts = z.string().transform((value, ctx) => {
  const accounts: ReelAccount[] = [];
  for (const item of value.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [tenant, accountId, accessToken, ...rest] = item.split(":");
    if (!tenant || !accountId || !accessToken || rest.length > 0 || !/^[0-9A-Za-z_-]{1,64}$/.test(accountId)) {
      ctx.addIssue({ code: "custom", message: "expected tenant_id:account_id:access_token triples, comma separated" });
      return z.NEVER;
    }
    accounts.push({ tenantId: tenant, accountId, accessToken });
  }
  return accounts;
});

/** A worker's metrics and health port; `npm start` gives its second worker the next one, and so on. */
export const DEFAULT_METRICS_PORT = 9464;
/** Tenants per process with their own `tenant` label value on job metrics. */
export const DEFAULT_METRICS_TENANT_LABELS = 20;

const boolean = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");

/** pino's levels; LOG_LEVEL picks the least severe one written. */
export const logLevelSchema = z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info");

const envSchema = z.object({
  NODE_ENV: z.string().default("production"),
  LOG_LEVEL: logLevelSchema,
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  HOST: z.string().regex(/^[A-Za-z0-9.:-]{1,253}$/, "HOST is the address the web server binds, e.g. 127.0.0.1 or 0.0.0.0").optional(),
  REDIS_URL: z.string().url({ message: "REDIS_URL must be a redis:// URL (npm start sets it when it runs the embedded Redis)" }),
  KAFKA_BROKERS: z
    .string()
    .min(1, "KAFKA_BROKERS must list host:port bootstrap servers (npm start sets it when it runs the embedded broker)")
    .transform((v) => v.split(",").map((s) => s.trim()).filter(Boolean)),
  KAFKA_EMBEDDED: boolean.default(false),
  API_KEYS: apiKeys,
  WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(64),
  TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(16),
  MAX_BUFFERED_PER_PARTITION: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  WORKER_ID: z.string().min(1).optional(),
  MAX_PROMPT_CHARS: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_PROMPT_CHARS),
  GRAPH_URL: z.string().url().optional(),
  GRAPH_VERSION: z.string().regex(/^v\d+\.\d+$/, "GRAPH_VERSION looks like v21.0").default("v21.0"),
  REEL_ACCOUNTS: reelAccounts.optional(),
  REEL_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  REEL_POLL_ATTEMPTS: z.coerce.number().int().min(1).max(10_000).default(30),
  SANDBOX_PROCESSING_MS: z.coerce.number().int().min(0).max(3_600_000).default(3000),
  SANDBOX_PUBLISH_LIMIT: z.coerce.number().int().min(1).max(10_000).default(100),
  ALLOW_PRIVATE_VIDEO_URLS: boolean.default(false),
  /** The fetcher may reach private addresses; ALLOW_PRIVATE_VIDEO_URLS is its older name, still read. */
  ALLOW_PRIVATE_URLS: boolean.optional(),
  LOCAL_MODEL_TOKENS_PER_SECOND: z.coerce.number().min(0.1).max(100_000).default(40),
  LLM_BASE_URL: z.string().url().optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODELS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : [])),
  /** JSON [{name, base_url, api_key?, models, max_tokens_param?}]; resolved with the short form above into Config.LLM_PROVIDERS. */
  LLM_PROVIDERS: z.string().optional(),
  LLM_PROVIDERS_FILE: z.string().optional(),
  /** JSON {"<model>": {input_per_million, output_per_million}} in USD. */
  MODEL_PRICES: z.string().optional(),
  MODEL_PRICES_FILE: z.string().optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  DATA_DIR: z.string().default(".data"),
  /** Largest video POST /api/uploads accepts (Meta's newer page: 300 MB). */
  UPLOAD_MAX_BYTES: z.coerce.number().int().min(1).max(4 * 1024 ** 3).default(300 * 1024 * 1024),
  /** Uploaded videos a tenant may hold at once; a file goes when its publication ends. */
  UPLOAD_TENANT_QUOTA_BYTES: z.coerce.number().int().min(1).default(2 * 1024 ** 3),
  /** Probe each video before its container is created: "auto" does so unless GRAPH_URL is the built-in sandbox (which checks it itself). */
  REEL_PREFLIGHT: z.enum(["auto", "on", "off"]).default("auto"),
  SESSION_SECRET: z.string().min(32, "SESSION_SECRET must be at least 32 characters").optional(),
  /** Encrypts connected accounts' tokens at rest; a random key generated into DATA_DIR when absent. */
  ACCOUNTS_SECRET: z.string().min(32, "ACCOUNTS_SECRET must be at least 32 characters").optional(),
  /** Lets a caller other than this machine drive the sandbox's control surface (/graph/_sandbox/). */
  SANDBOX_ADMIN_TOKEN: z.string().min(16, "SANDBOX_ADMIN_TOKEN must be at least 16 characters").optional(),
  MAX_STREAMS_PER_TENANT: z.coerce.number().int().min(1).max(1_000_000).default(200),
  BENCH_FLOOR_ROUTE: boolean.default(false),
  WEBHOOKS_PER_TENANT: z.coerce.number().int().min(1).max(1000).default(10),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(10_000),
  WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(1).max(86_400_000).default(3_600_000),
  WEBHOOK_RETRY_WINDOW_MS: z.coerce.number().int().min(1).max(30 * 86_400_000).default(86_400_000),
  /** A worker's port for GET /metrics and its health; 0 turns it off. `npm start` gives its workers this port and the next ones. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_METRICS_PORT),
  /** Bearer token GET /metrics asks for; without it /metrics answers this machine (loopback) only. */
  METRICS_TOKEN: z.string().min(16, "METRICS_TOKEN must be at least 16 characters").optional(),
  /** Tenants that get their own `tenant` label value on job metrics, per process (the first seen); the rest are "other". 0: no tenant label values. */
  METRICS_TENANT_LABELS: z.coerce.number().int().min(0).max(1000).default(DEFAULT_METRICS_TENANT_LABELS),
  /** Times every Redis command (`redis_round_trip_seconds`); off by default, it costs a worker about a tenth of its CPU per job. */
  METRICS_REDIS_COMMANDS: boolean.default(false),
  /** Where traces go (OTLP over HTTP, e.g. http://collector:4318); unset: no traces are recorded. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url("OTEL_EXPORTER_OTLP_ENDPOINT must be a URL, e.g. http://127.0.0.1:4318").optional(),
});

/** The schema of every variable, one field each: .env.example and compose.yaml are checked against it. */
export const CONFIG_SCHEMA = envSchema;
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as (keyof typeof envSchema.shape)[];

export interface ReelAccount {
  tenantId: string;
  accountId: string;
  accessToken: string;
}

export type Config = Omit<z.infer<typeof envSchema>, "REEL_ACCOUNTS" | "GRAPH_URL" | "ALLOW_PRIVATE_URLS" | "LLM_PROVIDERS" | "MODEL_PRICES"> & {
  ALLOW_PRIVATE_URLS: boolean;
  GRAPH_URL: string;
  /** True when GRAPH_URL points at the built-in sandbox of this same server. */
  GRAPH_SANDBOX: boolean;
  REEL_ACCOUNTS: ReelAccount[];
  /** LLM_PROVIDERS (or its file) and the short form LLM_BASE_URL + LLM_MODELS, each model name routed to one. */
  LLM_PROVIDERS: ProviderConfig[];
  /** MODEL_PRICES (or its file). */
  MODEL_PRICES: ModelPrices;
};

export class ConfigError extends Error {}

/** Parses an environment; throws a ConfigError whose message names every bad variable. `readFile` reads the *_FILE settings. */
export function parseConfig(env: Record<string, string | undefined>, readFile: ReadFile = (file) => readFileSync(file, "utf8")): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".") || "(env)"}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const parsed = result.data;
  let providers: ProviderConfig[];
  let prices: ModelPrices;
  try {
    providers = resolveProviders(parsed, [LOCAL_MODEL], readFile);
    prices = resolvePrices(parsed, readFile);
  } catch (error) {
    if (error instanceof SettingError) throw new ConfigError(`Invalid configuration:\n  ${error.variable}: ${error.message}`);
    throw error;
  }
  const sandboxUrl = `http://127.0.0.1:${parsed.PORT}/graph`;
  const graphUrl = (parsed.GRAPH_URL ?? sandboxUrl).replace(/\/+$/, "");
  const tenants = new Set(parsed.API_KEYS.map((k) => k.tenantId));
  const accounts = parsed.REEL_ACCOUNTS ?? defaultSandboxAccounts(parsed.API_KEYS);
  const stranger = accounts.find((a) => !tenants.has(a.tenantId));
  if (stranger) throw new ConfigError(`Invalid configuration:\n  REEL_ACCOUNTS: tenant "${stranger.tenantId}" has no API key`);
  const ids = accounts.map((a) => a.accountId);
  if (new Set(ids).size !== ids.length) throw new ConfigError("Invalid configuration:\n  REEL_ACCOUNTS: an account belongs to one tenant only");
  return {
    ...parsed,
    ALLOW_PRIVATE_URLS: parsed.ALLOW_PRIVATE_URLS ?? parsed.ALLOW_PRIVATE_VIDEO_URLS,
    GRAPH_URL: graphUrl,
    GRAPH_SANDBOX: graphUrl === sandboxUrl || graphUrl === `http://localhost:${parsed.PORT}/graph`,
    REEL_ACCOUNTS: accounts,
    LLM_PROVIDERS: providers,
    MODEL_PRICES: prices,
  };
}

/** One sandbox account per tenant; id and token derive from the tenant's key so they are stable across restarts. */
function defaultSandboxAccounts(keys: { tenantId: string; key: string }[]): ReelAccount[] {
  const seen = new Set<string>();
  return keys
    .filter((k) => !seen.has(k.tenantId) && seen.add(k.tenantId))
    .map((k) => {
      const digest = createHash("sha256").update(`sandbox-account:${k.key}`).digest();
      const accountId = `1784140${digest.readUInt32BE(0).toString().padStart(10, "0")}`;
      const accessToken = `SANDBOX${createHash("sha256").update(`sandbox-token:${k.key}`).digest("hex").slice(0, 40)}`;
      return { tenantId: k.tenantId, accountId, accessToken };
    });
}

let cached: Config | undefined;

/** The process's configuration, parsed on first use. */
export function getConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}
