import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, type ReadSecret } from "@/lib/config";

/** Instagram Login's app and hosts: the sandbox's own with the sandbox, Meta's otherwise, each replaceable. */

const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "127.0.0.1:9092",
  API_KEYS: "demo:0123456789abcdef0123",
  PORT: "3100",
};
/** The secrets getConfig keeps under DATA_DIR, here named after their file (sandbox-app-secrets.test.ts reads real ones). */
const readSecret: ReadSecret = (_dataDir, name) => `secret-from-${name}`;

describe("INSTAGRAM_LOGIN", () => {
  it("with the sandbox: its own app, its dialog through PUBLIC_URL, its token and Graph hosts; nothing to set", () => {
    const login = parseConfig(base, readSecret).INSTAGRAM_LOGIN;
    expect(login).toEqual({
      app: { id: expect.stringMatching(/^\d+$/), secret: "secret-from-sandbox-instagram-app-secret" },
      dialogUrl: "http://127.0.0.1:3100/graph/oauth/authorize",
      tokenUrl: "http://127.0.0.1:3100/graph",
      graphUrl: "http://127.0.0.1:3100/graph/instagram",
      redirectUri: "http://127.0.0.1:3100/api/accounts/connect/instagram/callback",
    });
  });

  it("with Meta's Graph: Meta's hosts, no app until one is configured, the redirect_uri from PUBLIC_URL exactly", () => {
    const env = { ...base, GRAPH_URL: "https://graph.facebook.com", PUBLIC_URL: "https://dispatch.example.com/" };
    expect(parseConfig(env).INSTAGRAM_LOGIN).toEqual({
      app: undefined,
      dialogUrl: "https://www.instagram.com/oauth/authorize",
      tokenUrl: "https://api.instagram.com",
      graphUrl: "https://graph.instagram.com",
      redirectUri: "https://dispatch.example.com/api/accounts/connect/instagram/callback",
    });
    expect(
      parseConfig({ ...env, INSTAGRAM_APP_ID: "990602627938098", INSTAGRAM_APP_SECRET: "a-real-app-secret" })
        .INSTAGRAM_LOGIN.app,
    ).toEqual({ id: "990602627938098", secret: "a-real-app-secret" });
  });

  it("an app id without its secret stops the start, naming the variable", () => {
    expect(() => parseConfig({ ...base, INSTAGRAM_APP_ID: "990602627938098" })).toThrow(ConfigError);
    expect(() => parseConfig({ ...base, INSTAGRAM_APP_ID: "990602627938098" })).toThrow(/INSTAGRAM_APP_SECRET/);
  });
});
