import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig, readSecretFile } from "@/lib/config";

/**
 * The sandbox's own apps' secrets: random per installation, kept under DATA_DIR like the other
 * secrets, the same for every process sharing DATA_DIR, and never the constants the code once held.
 */

const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "127.0.0.1:9092",
  API_KEYS: "demo:0123456789abcdef0123",
  PORT: "3100",
};

let dirs: string[];
const newDataDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-app-secrets-"));
  dirs.push(dir);
  return dir;
};

beforeEach(() => {
  dirs = [];
});
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the sandbox's app secrets", () => {
  it("are made once under DATA_DIR (mode 0600) and read back by a second process there; two apps, two secrets", () => {
    const DATA_DIR = newDataDir();
    const web = parseConfig({ ...base, DATA_DIR }, readSecretFile);
    const worker = parseConfig({ ...base, DATA_DIR }, readSecretFile);
    const instagram = web.INSTAGRAM_LOGIN.app!.secret;
    const facebook = web.FACEBOOK_LOGIN.app!.secret;
    expect(instagram).toMatch(/^[0-9a-f]{64}$/);
    expect(facebook).toMatch(/^[0-9a-f]{64}$/);
    expect(facebook).not.toBe(instagram);
    expect(worker.INSTAGRAM_LOGIN.app).toEqual(web.INSTAGRAM_LOGIN.app);
    expect(worker.FACEBOOK_LOGIN.app).toEqual(web.FACEBOOK_LOGIN.app);
    const file = path.join(DATA_DIR, "sandbox-instagram-app-secret");
    expect(readFileSync(file, "utf8").trim()).toBe(instagram);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("differ between installations and are not the constants the code once held", () => {
    const one = parseConfig({ ...base, DATA_DIR: newDataDir() }, readSecretFile);
    const two = parseConfig({ ...base, DATA_DIR: newDataDir() }, readSecretFile);
    expect(one.INSTAGRAM_LOGIN.app!.secret).not.toBe(two.INSTAGRAM_LOGIN.app!.secret);
    expect(one.INSTAGRAM_LOGIN.app!.id).toBe(two.INSTAGRAM_LOGIN.app!.id);
    expect([one.INSTAGRAM_LOGIN.app!.secret, one.FACEBOOK_LOGIN.app!.secret]).not.toContain(
      "sandbox-instagram-app-secret",
    );
    expect(one.FACEBOOK_LOGIN.app!.secret).not.toBe("sandbox-facebook-app-secret");
  });

  it("without a secret reader parsing touches no file and leaves the sandbox's logins unconfigured; a configured app needs none", () => {
    const DATA_DIR = path.join(newDataDir(), "untouched");
    const config = parseConfig({ ...base, DATA_DIR });
    expect(config.INSTAGRAM_LOGIN.app).toBeUndefined();
    expect(config.FACEBOOK_LOGIN.app).toBeUndefined();
    expect(() => statSync(DATA_DIR)).toThrow();
    const configured = parseConfig({
      ...base,
      DATA_DIR,
      INSTAGRAM_APP_ID: "1234567890",
      INSTAGRAM_APP_SECRET: "app-secret-x",
    });
    expect(configured.INSTAGRAM_LOGIN.app).toEqual({ id: "1234567890", secret: "app-secret-x" });
  });
});
