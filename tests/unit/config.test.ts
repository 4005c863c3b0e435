import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { DEFAULT_GRAPH_VERSION } from "@/lib/graph/versions";

const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "a:9092, b:9092",
  API_KEYS: "acme:acme-key-0123456789abcdef",
};

describe("configuration", () => {
  it("applies the defaults of the spec", () => {
    const config = parseConfig(base);
    expect(config.PORT).toBe(3000);
    expect(config.KAFKA_BROKERS).toEqual(["a:9092", "b:9092"]);
    expect(config.WORKER_CONCURRENCY).toBe(64);
    expect(config.TENANT_CONCURRENCY).toBe(16);
    expect(config.MAX_BUFFERED_PER_PARTITION).toBe(10_000);
    expect(config.GRAPH_URL).toBe("http://127.0.0.1:3000/graph");
    expect(config.GRAPH_SANDBOX).toBe(true);
    expect(config.GRAPH_VERSION).toBe(DEFAULT_GRAPH_VERSION);
    expect([config.REEL_POLL_INTERVAL_MS, config.REEL_POLL_ATTEMPTS, config.SANDBOX_PROCESSING_MS]).toEqual([
      5000, 30, 3000,
    ]);
    expect(config.LOCAL_MODEL_TOKENS_PER_SECOND).toBe(40);
    expect(config.MAX_PROMPT_CHARS).toBe(32768);
    expect(config.REEL_ACCOUNTS).toHaveLength(1);
    expect(config.REEL_ACCOUNTS[0].tenantId).toBe("acme");
    expect(parseConfig(base).REEL_ACCOUNTS).toEqual(config.REEL_ACCOUNTS);
  });

  it("points at the real Graph API when GRAPH_URL says so", () => {
    const config = parseConfig({
      ...base,
      GRAPH_URL: "https://graph.facebook.com/",
      REEL_ACCOUNTS: "acme:17841400000000001:EAAB",
    });
    expect(config.GRAPH_URL).toBe("https://graph.facebook.com");
    expect(config.GRAPH_SANDBOX).toBe(false);
  });

  it("reads ALLOWED_HOSTS as a list of names, spaces and empty entries dropped", () => {
    expect(parseConfig({ ...base, ALLOWED_HOSTS: " web, dispatch.internal ,,[::1]" }).ALLOWED_HOSTS).toEqual([
      "web",
      "dispatch.internal",
      "[::1]",
    ]);
    expect(parseConfig(base).ALLOWED_HOSTS).toBeUndefined();
  });

  it.each([
    ["PORT", { PORT: "http" }],
    ["REDIS_URL", { REDIS_URL: "not a url" }],
    ["API_KEYS", { API_KEYS: "acme-without-key" }],
    ["API_KEYS", { API_KEYS: "acme:short" }],
    ["WORKER_CONCURRENCY", { WORKER_CONCURRENCY: "0" }],
    ["REEL_ACCOUNTS", { REEL_ACCOUNTS: "acme:1" }],
    ["REEL_ACCOUNTS", { REEL_ACCOUNTS: "stranger:1:token" }],
    ["GRAPH_VERSION", { GRAPH_VERSION: "21" }],
    ["ALLOW_PRIVATE_URLS", { ALLOW_PRIVATE_URLS: "maybe" }],
    ["HOST", { HOST: "127.0.0.1; rm" }],
    ["ALLOWED_HOSTS", { ALLOWED_HOSTS: "web, a b" }],
    ["ALLOWED_HOSTS", { ALLOWED_HOSTS: "evil.example/path" }],
  ])("names %s when it is bad", (name, override) => {
    expect(() => parseConfig({ ...base, ...override })).toThrow(name);
  });
});
