import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, type ReadSecret } from "@/lib/config";

/** Facebook Login for Business's app and hosts: the sandbox's own with the sandbox, Meta's otherwise, each replaceable. */

const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "127.0.0.1:9092",
  API_KEYS: "demo:0123456789abcdef0123",
  PORT: "3100",
};
/** The secrets getConfig keeps under DATA_DIR, here named after their file (sandbox-app-secrets.test.ts reads real ones). */
const readSecret: ReadSecret = (_dataDir, name) => `secret-from-${name}`;

describe("FACEBOOK_LOGIN", () => {
  it("with the sandbox: its own app (not Instagram's), its versioned dialog through PUBLIC_URL, its Graph host; nothing to set", () => {
    const config = parseConfig(base, readSecret);
    expect(config.FACEBOOK_LOGIN).toEqual({
      app: { id: expect.stringMatching(/^\d+$/), secret: "secret-from-sandbox-facebook-app-secret" },
      dialogUrl: "http://127.0.0.1:3100/graph/v26.0/dialog/oauth",
      graphUrl: "http://127.0.0.1:3100/graph/facebook",
      redirectUri: "http://127.0.0.1:3100/api/accounts/connect/facebook/callback",
    });
    expect(config.FACEBOOK_LOGIN.app!.id).not.toBe(config.INSTAGRAM_LOGIN.app!.id);
  });

  it("with Meta's Graph: Meta's hosts at GRAPH_VERSION, no app until one is configured, the redirect_uri from PUBLIC_URL exactly", () => {
    const env = {
      ...base,
      GRAPH_URL: "https://graph.facebook.com",
      GRAPH_VERSION: "v23.0",
      PUBLIC_URL: "https://dispatch.example.com/",
    };
    expect(parseConfig(env).FACEBOOK_LOGIN).toEqual({
      app: undefined,
      dialogUrl: "https://www.facebook.com/v23.0/dialog/oauth",
      graphUrl: "https://graph.facebook.com",
      redirectUri: "https://dispatch.example.com/api/accounts/connect/facebook/callback",
    });
    const configured = parseConfig({
      ...env,
      FACEBOOK_APP_ID: "1234567890",
      FACEBOOK_APP_SECRET: "a-real-facebook-secret",
      FACEBOOK_DIALOG_URL: "https://login.example/dialog/",
      FACEBOOK_GRAPH_URL: "https://graph.example/",
    }).FACEBOOK_LOGIN;
    expect(configured).toMatchObject({
      app: { id: "1234567890", secret: "a-real-facebook-secret" },
      dialogUrl: "https://login.example/dialog",
      graphUrl: "https://graph.example",
    });
  });

  it("an app id without its secret stops the start, naming the variable", () => {
    expect(() => parseConfig({ ...base, FACEBOOK_APP_ID: "1234567890" })).toThrow(ConfigError);
    expect(() => parseConfig({ ...base, FACEBOOK_APP_ID: "1234567890" })).toThrow(/FACEBOOK_APP_SECRET/);
  });
});
