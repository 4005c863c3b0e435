import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startBanner } from "@/scripts/lib/banner";
import { waitForHealth, type ManagedProcess, type Stack } from "@/scripts/lib/stack";

const ROOT = path.resolve(__dirname, "../..");
const dataDir = mkdtempSync(path.join(tmpdir(), "dispatch-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `npm start` without setup.sh: node --import tsx scripts/start.ts, killed with its group if it hangs. */
function start(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string; ms: number }> {
  const began = Date.now();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: ROOT,
    env: {
      NODE_ENV: "production",
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      API_KEYS: "acme:acme-key-0123456789abcdef",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const timer = setTimeout(() => killGroup(child), timeoutMs);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - began });
    }),
  );
}
function killGroup(child: ChildProcess) {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
}

describe("npm start", () => {
  it.each([
    ["PORT", { PORT: "abc" }],
    ["API_KEYS", { API_KEYS: "acme-without-a-key" }],
    ["HOST", { HOST: "not a host" }],
    // Read by the workers alone: it must stop the start as well.
    ["WORKER_CONCURRENCY", { WORKER_CONCURRENCY: "0" }],
  ])(
    "stops at once with a non-zero exit naming %s when it is bad",
    async (name, env) => {
      const result = await start(env, 20_000);
      expect(result.code, result.output).not.toBe(0);
      expect(result.code, result.output).not.toBeNull();
      expect(result.ms).toBeLessThan(15_000);
      expect(result.output).toContain(name);
      expect(result.output).not.toMatch(/building the web app|ready/);
    },
    30_000,
  );

  it("fails the start as soon as a worker exits during it, not at the health deadline", async () => {
    const exited = { exitCode: 1, signalCode: null } as unknown as ChildProcess;
    const alive = { exitCode: null, signalCode: null } as unknown as ChildProcess;
    const fake = (name: string, child: ChildProcess) => ({ name, child }) as ManagedProcess;
    const began = Date.now();
    await expect(
      waitForHealth("http://127.0.0.1:9", fake("web", alive), 60_000, 1, [fake("worker-1", exited)]),
    ).rejects.toThrow(/worker-1 exited during start-up/);
    expect(Date.now() - began).toBeLessThan(5_000);
  });
});

describe("the start banner", () => {
  const stack = (keys: string, generated: boolean, host = "127.0.0.1") =>
    ({
      url: "http://127.0.0.1:3000",
      host,
      apiKey: keys.split(",")[0].split(":")[1],
      apiKeyGenerated: generated,
      env: {
        API_KEYS: keys,
        DATA_DIR: "/srv/.data",
        REDIS_URL: "redis://:hunter2hunter2@redis:6379/0",
        KAFKA_BROKERS: "k:9092",
      },
      workers: [],
    }) as unknown as Stack;

  it("shows a key Dispatch generated", () => {
    const text = startBanner(stack("demo:dk_generated0123456789", true));
    expect(text).toContain("dk_generated0123456789");
    expect(text).toMatch(/tenant demo, generated/);
  });

  it("never shows an operator's keys, only the tenant names, nor a Redis password", () => {
    const text = startBanner(stack("acme:acme-operator-key-000001,globex:globex-operator-key-00002", false, "0.0.0.0"));
    expect(text).not.toContain("operator-key");
    expect(text).not.toContain("hunter2");
    expect(text).toMatch(/Tenants\s+acme, globex/);
    expect(text).toMatch(/ready/);
  });

  it("says when it listens on this machine only", () => {
    expect(startBanner(stack("demo:dk_generated0123456789", true))).toMatch(/Listening on 127\.0\.0\.1 only/);
    expect(startBanner(stack("demo:dk_generated0123456789", true, "0.0.0.0"))).not.toMatch(/only/);
  });
});
