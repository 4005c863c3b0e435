import { createHash } from "node:crypto";
import { z } from "zod";
import { readOrCreateSecretFile } from "./secret-file";
import { TENANT_ID_PATTERN } from "./tenant-id";

/**
 * The environment, validated once. `npm start` fills REDIS_URL, KAFKA_BROKERS and API_KEYS with
 * its embedded parts before it starts the web server and the workers, so here they are required.
 */

const apiKeys = z
  .string()
  .min(1)
  .transform((value, ctx) => {
    const pairs: { tenantId: string; key: string }[] = [];
    for (const item of value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      const at = item.indexOf(":");
      const tenant = item.slice(0, at);
      const key = item.slice(at + 1);
      if (at < 1 || !TENANT_ID_PATTERN.test(tenant) || key.length < 16) {
        ctx.addIssue({
          code: "custom",
          message: `"${tenant || item.slice(0, 8)}…" is not tenant_id:key with a key of 16+ characters`,
        });
        return z.NEVER;
      }
      pairs.push({ tenantId: tenant, key });
    }
    return pairs;
  });

const reelAccounts = z.string().transform((value, ctx) => {
  const accounts: ReelAccount[] = [];
  for (const item of value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [tenant, accountId, accessToken, ...rest] = item.split(":");
    if (!tenant || !accountId || !accessToken || rest.length > 0 || !/^[0-9A-Za-z_-]{1,64}$/.test(accountId)) {
      ctx.addIssue({ code: "custom", message: "expected tenant_id:account_id:access_token triples, comma separated" });
      return z.NEVER;
    }
    accounts.push({ tenantId: tenant, accountId, accessToken });
  }
  return accounts;
});

/** The longest prompt POST /v1/jobs accepts unless MAX_PROMPT_CHARS says otherwise. */
export const DEFAULT_MAX_PROMPT_CHARS = 32768;
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
  HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:-]{1,253}$/, "HOST is the address the web server binds, e.g. 127.0.0.1 or 0.0.0.0")
    .optional(),
  REDIS_URL: z
    .string()
    .url({ message: "REDIS_URL must be a redis:// URL (npm start sets it when it runs the embedded Redis)" }),
  KAFKA_BROKERS: z
    .string()
    .min(1, "KAFKA_BROKERS must list host:port bootstrap servers (npm start sets it when it runs the embedded broker)")
    .transform((v) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  KAFKA_EMBEDDED: boolean.default(false),
  /** The generation consumer's fetch long-poll; `npm start` shortens it for the embedded broker (see stack.ts). */
  KAFKA_FETCH_WAIT_MS: z.coerce.number().int().min(1).max(10_000).default(50),
  API_KEYS: apiKeys,
  WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(64),
  TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(16),
  MAX_BUFFERED_PER_PARTITION: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  WORKER_ID: z.string().min(1).optional(),
  MAX_PROMPT_CHARS: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_PROMPT_CHARS),
  GRAPH_URL: z.string().url().optional(),
  GRAPH_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, "GRAPH_VERSION looks like v26.0")
    // lib/graph/versions.ts's DEFAULT_GRAPH_VERSION (config names no feature; a unit test keeps them equal).
    .default("v26.0"),
  REEL_ACCOUNTS: reelAccounts.optional(),
  REEL_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  REEL_POLL_ATTEMPTS: z.coerce.number().int().min(1).max(10_000).default(30),
  /** After those polls, a container still IN_PROGRESS is read once per this until it settles or its 24 h life ends (Meta's advice: once a minute). */
  REEL_WATCH_INTERVAL_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
  /** Above 80 % of a Graph usage figure, calls of that app or account are spaced out, up to this far apart near 100 %. */
  GRAPH_PACE_SPACING_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  SANDBOX_PROCESSING_MS: z.coerce.number().int().min(0).max(3_600_000).default(3000),
  SANDBOX_PUBLISH_LIMIT: z.coerce.number().int().min(1).max(10_000).default(100),
  /** A reel's insights answer an empty `data` this long after publishing, as Meta's lag (up to 48 h) does. */
  SANDBOX_INSIGHTS_LAG_MS: z.coerce.number().int().min(0).max(172_800_000).default(60_000),
  /** The sandbox's fetcher and webhook deliveries may reach every loopback and private address. */
  ALLOW_PRIVATE_URLS: boolean.default(false),
  LOCAL_MODEL_TOKENS_PER_SECOND: z.coerce.number().min(0.1).max(100_000).default(40),
  LLM_BASE_URL: z.string().url().optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODELS: z
    .string()
    .optional()
    .transform((v) =>
      v
        ? v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
    ),
  /** JSON [{name, base_url, api_key?, models, max_tokens_param?}]; resolved with the short form above by modelSettings (lib/jobs/list-models.ts). */
  LLM_PROVIDERS: z.string().optional(),
  LLM_PROVIDERS_FILE: z.string().optional(),
  /** JSON {"<model>": {input_per_million, output_per_million}} in USD. */
  MODEL_PRICES: z.string().optional(),
  MODEL_PRICES_FILE: z.string().optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  DATA_DIR: z.string().default(".data"),
  /** Largest video POST /api/uploads accepts (Meta's newer page: 300 MB). */
  UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(4 * 1024 ** 3)
    .default(300 * 1024 * 1024),
  /** Uploaded videos a tenant may hold at once; a file goes when its publication ends. */
  UPLOAD_TENANT_QUOTA_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(2 * 1024 ** 3),
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
  WEBHOOK_RETRY_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400_000)
    .default(86_400_000),
  /** A worker's port for GET /metrics and its health; 0 turns it off. `npm start` gives its workers this port and the next ones. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_METRICS_PORT),
  /** Bearer token GET /metrics asks for; without it /metrics answers this machine (loopback) only. */
  METRICS_TOKEN: z.string().min(16, "METRICS_TOKEN must be at least 16 characters").optional(),
  /** Tenants that get their own `tenant` label value on job metrics, per process (the first seen); the rest are "other". 0: no tenant label values. */
  METRICS_TENANT_LABELS: z.coerce.number().int().min(0).max(1000).default(DEFAULT_METRICS_TENANT_LABELS),
  /** Times every Redis command (`redis_round_trip_seconds`); off by default, it costs a worker about a tenth of its CPU per job. */
  METRICS_REDIS_COMMANDS: boolean.default(false),
  /** A directory where workers also append every audit event (JSON lines); `npm start` sets DATA_DIR/audit with the embedded broker, whose log is bounded. Unset or empty: off. */
  AUDIT_ARCHIVE_DIR: z.string().optional(),
  /** Adds each finished job and settled publication to the usage aggregates (GET /v1/usage); off only to measure what that costs. */
  USAGE_AGGREGATES: boolean.default(true),
  /** Where traces go (OTLP over HTTP, e.g. http://collector:4318); unset: no traces are recorded. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .url("OTEL_EXPORTER_OTLP_ENDPOINT must be a URL, e.g. http://127.0.0.1:4318")
    .optional(),
  /** Where browsers reach Dispatch; Meta sends people back to PUBLIC_URL + the callback path, exactly. */
  PUBLIC_URL: z
    .string()
    .url("PUBLIC_URL is where browsers reach Dispatch, e.g. https://dispatch.example.com")
    .optional(),
  /**
   * Host names the web server answers besides PUBLIC_URL's, HOST and the loopback names (a
   * Docker service name the workers use, another name a proxy forwards); any other Host gets 421.
   */
  ALLOWED_HOSTS: z
    .string()
    .transform((v) =>
      v
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.:-]{1,253})$/,
            "ALLOWED_HOSTS lists host names, comma-separated, e.g. web,dispatch.internal",
          ),
      ),
    )
    .optional(),
  /** The Instagram app of Instagram Login (Meta's App Dashboard); with the sandbox, its own app when unset. */
  INSTAGRAM_APP_ID: z
    .string()
    .regex(/^[0-9A-Za-z_-]{1,64}$/, "INSTAGRAM_APP_ID is the Instagram app's id (digits)")
    .optional(),
  INSTAGRAM_APP_SECRET: z.string().min(8, "INSTAGRAM_APP_SECRET is the Instagram app's secret").optional(),
  /** Instagram's authorize dialog, its token host (api.instagram.com) and its Graph host (graph.instagram.com). */
  INSTAGRAM_DIALOG_URL: z.string().url().optional(),
  INSTAGRAM_TOKEN_URL: z.string().url().optional(),
  INSTAGRAM_GRAPH_URL: z.string().url().optional(),
  /** The Facebook app of Facebook Login for Business (Meta's App Dashboard); with the sandbox, its own app when unset. */
  FACEBOOK_APP_ID: z
    .string()
    .regex(/^[0-9A-Za-z_-]{1,64}$/, "FACEBOOK_APP_ID is the Facebook app's id (digits)")
    .optional(),
  FACEBOOK_APP_SECRET: z.string().min(8, "FACEBOOK_APP_SECRET is the Facebook app's secret").optional(),
  /** Facebook's OAuth dialog (www.facebook.com/<version>/dialog/oauth) and its Graph host (tokens, Pages, publishing). */
  FACEBOOK_DIALOG_URL: z.string().url().optional(),
  FACEBOOK_GRAPH_URL: z.string().url().optional(),
  /** How long a connection may take between leaving for Meta's dialog and coming back. */
  META_LOGIN_STATE_TTL_S: z.coerce.number().int().min(1).max(3600).default(600),
  /** A long-lived Instagram-login token is refreshed once it expires within this many seconds (and is 24 h old). */
  TOKEN_REFRESH_BEFORE_S: z.coerce.number().int().min(3600).max(5_184_000).default(864_000),
  /** How often a worker looks for tokens due a refresh; also how soon a failed refresh is tried again. */
  TOKEN_REFRESH_INTERVAL_MS: z.coerce.number().int().min(10).max(86_400_000).default(600_000),
});

/** The schema of every variable, one field each: .env.example and compose.yaml are checked against it. */
export const CONFIG_SCHEMA = envSchema;
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as (keyof typeof envSchema.shape)[];

export interface ReelAccount {
  tenantId: string;
  accountId: string;
  accessToken: string;
}

/** Instagram Login's endpoints and app, resolved: the sandbox's own when GRAPH_URL is the sandbox, Meta's hosts otherwise. */
export interface InstagramLoginConfig {
  /** Undefined until INSTAGRAM_APP_ID and INSTAGRAM_APP_SECRET are set (the sandbox has its own). */
  app: { id: string; secret: string } | undefined;
  dialogUrl: string;
  tokenUrl: string;
  graphUrl: string;
  /** PUBLIC_URL + INSTAGRAM_CALLBACK_PATH, exactly as the dialog and the code exchange are given it. */
  redirectUri: string;
}

export const INSTAGRAM_CALLBACK_PATH = "/api/accounts/connect/instagram/callback";
/**
 * The sandbox's own apps, used when GRAPH_URL is the sandbox and no app is configured: a fixed id
 * and a secret random per installation, kept under DATA_DIR (`secretFile`) as the other secrets
 * are, so web and worker processes sharing DATA_DIR agree on it and nobody can read it in the code.
 */
export const SANDBOX_INSTAGRAM_APP = { id: "990000000000001", secretFile: "sandbox-instagram-app-secret" } as const;

/** Facebook Login for Business, resolved as Instagram Login's is; its Graph host serves the tokens, the Pages and publishing. */
export type FacebookLoginConfig = Omit<InstagramLoginConfig, "tokenUrl">;

export const FACEBOOK_CALLBACK_PATH = "/api/accounts/connect/facebook/callback";
export const SANDBOX_FACEBOOK_APP = { id: "990000000000002", secretFile: "sandbox-facebook-app-secret" } as const;

/** A secret kept under DATA_DIR by name, made on first use: how the sandbox's apps get theirs. */
export type ReadSecret = (dataDir: string, name: string) => string;

/** The one getConfig uses: DATA_DIR/<name>, random, made once and shared by the processes there (lib/secret-file.ts). */
export const readSecretFile: ReadSecret = (dataDir, name) => readOrCreateSecretFile(dataDir, name).value;

export type Config = Omit<z.infer<typeof envSchema>, "REEL_ACCOUNTS" | "GRAPH_URL" | "PUBLIC_URL"> & {
  PUBLIC_URL: string;
  INSTAGRAM_LOGIN: InstagramLoginConfig;
  FACEBOOK_LOGIN: FacebookLoginConfig;
  GRAPH_URL: string;
  /** True when GRAPH_URL points at the built-in sandbox of this same server. */
  GRAPH_SANDBOX: boolean;
  REEL_ACCOUNTS: ReelAccount[];
};

export class ConfigError extends Error {}

/**
 * Parses an environment; throws a ConfigError whose message names every bad variable. The model
 * servers and prices (JSON, or files) are the jobs feature's to resolve: modelSettings in
 * lib/jobs/list-models.ts, which start-up calls too. `readSecret` gives the sandbox's own apps
 * their secrets (getConfig reads them from DATA_DIR); without it parsing touches no file and, with
 * the sandbox and no app configured, the logins are left unconfigured (`app` undefined).
 */
export function parseConfig(env: Record<string, string | undefined>, readSecret?: ReadSecret): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".") || "(env)"}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const parsed = result.data;
  const sandboxUrl = `http://127.0.0.1:${parsed.PORT}/graph`;
  const graphUrl = (parsed.GRAPH_URL ?? sandboxUrl).replace(/\/+$/, "");
  const tenants = new Set(parsed.API_KEYS.map((k) => k.tenantId));
  const accounts = parsed.REEL_ACCOUNTS ?? defaultSandboxAccounts(parsed.API_KEYS);
  const stranger = accounts.find((a) => !tenants.has(a.tenantId));
  if (stranger)
    throw new ConfigError(`Invalid configuration:\n  REEL_ACCOUNTS: tenant "${stranger.tenantId}" has no API key`);
  const ids = accounts.map((a) => a.accountId);
  if (new Set(ids).size !== ids.length)
    throw new ConfigError("Invalid configuration:\n  REEL_ACCOUNTS: an account belongs to one tenant only");
  const graphSandbox = graphUrl === sandboxUrl || graphUrl === `http://localhost:${parsed.PORT}/graph`;
  if (!parsed.INSTAGRAM_APP_ID !== !parsed.INSTAGRAM_APP_SECRET)
    throw new ConfigError(
      "Invalid configuration:\n  INSTAGRAM_APP_SECRET: set INSTAGRAM_APP_ID and INSTAGRAM_APP_SECRET together",
    );
  if (!parsed.FACEBOOK_APP_ID !== !parsed.FACEBOOK_APP_SECRET)
    throw new ConfigError(
      "Invalid configuration:\n  FACEBOOK_APP_SECRET: set FACEBOOK_APP_ID and FACEBOOK_APP_SECRET together",
    );
  const publicUrl = (parsed.PUBLIC_URL ?? `http://127.0.0.1:${parsed.PORT}`).replace(/\/+$/, "");
  return {
    ...parsed,
    PUBLIC_URL: publicUrl,
    INSTAGRAM_LOGIN: instagramLoginOf(parsed, publicUrl, graphSandbox ? graphUrl : undefined, readSecret),
    FACEBOOK_LOGIN: facebookLoginOf(parsed, publicUrl, graphSandbox ? graphUrl : undefined, readSecret),
    GRAPH_URL: graphUrl,
    GRAPH_SANDBOX: graphSandbox,
    REEL_ACCOUNTS: accounts,
  };
}

/** With the sandbox (`sandboxUrl`) the whole login runs against it; otherwise Meta's own hosts, each replaceable. */
function instagramLoginOf(
  env: z.infer<typeof envSchema>,
  publicUrl: string,
  sandboxUrl: string | undefined,
  readSecret: ReadSecret | undefined,
): InstagramLoginConfig {
  const configured =
    env.INSTAGRAM_APP_ID && env.INSTAGRAM_APP_SECRET
      ? { id: env.INSTAGRAM_APP_ID, secret: env.INSTAGRAM_APP_SECRET }
      : undefined;
  const trim = (url: string) => url.replace(/\/+$/, "");
  // The dialog is a page the browser opens, so the sandbox's is reached through PUBLIC_URL.
  const sandboxDialog = sandboxUrl && `${publicUrl}/graph/oauth/authorize`;
  return {
    app: configured ?? (sandboxUrl ? sandboxApp(SANDBOX_INSTAGRAM_APP, env.DATA_DIR, readSecret) : undefined),
    dialogUrl: trim(env.INSTAGRAM_DIALOG_URL ?? sandboxDialog ?? "https://www.instagram.com/oauth/authorize"),
    tokenUrl: trim(env.INSTAGRAM_TOKEN_URL ?? sandboxUrl ?? "https://api.instagram.com"),
    // The sandbox's graph.instagram.com (lib/graph/sandbox/sandbox-hosts.ts): Instagram Login's tokens work there only.
    graphUrl: trim(env.INSTAGRAM_GRAPH_URL ?? (sandboxUrl ? `${sandboxUrl}/instagram` : "https://graph.instagram.com")),
    redirectUri: `${publicUrl}${INSTAGRAM_CALLBACK_PATH}`,
  };
}

/** Facebook Login for Business the same way: the sandbox's dialog and Graph with the sandbox, Meta's otherwise. */
function facebookLoginOf(
  env: z.infer<typeof envSchema>,
  publicUrl: string,
  sandboxUrl: string | undefined,
  readSecret: ReadSecret | undefined,
): FacebookLoginConfig {
  const configured =
    env.FACEBOOK_APP_ID && env.FACEBOOK_APP_SECRET
      ? { id: env.FACEBOOK_APP_ID, secret: env.FACEBOOK_APP_SECRET }
      : undefined;
  const dialogPath = `/${env.GRAPH_VERSION}/dialog/oauth`;
  return {
    app: configured ?? (sandboxUrl ? sandboxApp(SANDBOX_FACEBOOK_APP, env.DATA_DIR, readSecret) : undefined),
    dialogUrl: (
      env.FACEBOOK_DIALOG_URL ??
      (sandboxUrl ? `${publicUrl}/graph${dialogPath}` : `https://www.facebook.com${dialogPath}`)
    ).replace(/\/+$/, ""),
    // The sandbox's graph.facebook.com (lib/graph/sandbox/sandbox-hosts.ts): Facebook Login's tokens work there only.
    graphUrl: (
      env.FACEBOOK_GRAPH_URL ?? (sandboxUrl ? `${sandboxUrl}/facebook` : "https://graph.facebook.com")
    ).replace(/\/+$/, ""),
    redirectUri: `${publicUrl}${FACEBOOK_CALLBACK_PATH}`,
  };
}

function sandboxApp(
  app: { id: string; secretFile: string },
  dataDir: string,
  readSecret: ReadSecret | undefined,
): { id: string; secret: string } | undefined {
  return readSecret ? { id: app.id, secret: readSecret(dataDir, app.secretFile) } : undefined;
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

/** The process's configuration, parsed on first use; the sandbox's app secrets read from (or made in) DATA_DIR. */
export function getConfig(): Config {
  cached ??= parseConfig(process.env, readSecretFile);
  return cached;
}
