import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { buildIfStale } from "../../scripts/lib/build";
import { startStack, type Stack } from "../../scripts/lib/stack";
import { LOGIN_STATE_TTL_S, STACK_FILE, UPLOAD_MAX_BYTES, type StackInfo } from "./stack-file";

const root = path.resolve(__dirname, "../..");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Builds if stale and starts the embedded stack with fast reel polling and a slow-enough model to watch. */
export default async function globalSetup() {
  buildIfStale(root);
  const dataDir = path.join(root, ".test-data/e2e");
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Fully embedded, with a fresh key, whatever the calling shell has set.
  for (const name of [
    "REDIS_URL",
    "KAFKA_BROKERS",
    "GRAPH_URL",
    "API_KEYS",
    "REEL_ACCOUNTS",
    "LLM_BASE_URL",
    "DATA_DIR",
  ])
    delete env[name];
  Object.assign(env, {
    PORT: String(await freePort()),
    // Not the default 9464: a second run of the suite on this machine would find it taken.
    METRICS_PORT: String(await freePort()),
    REEL_POLL_INTERVAL_MS: "300",
    SANDBOX_PROCESSING_MS: "1000",
    // A reel's insights answer at once, so its card shows figures on the first view after publishing.
    SANDBOX_INSIGHTS_LAG_MS: "0",
    LOCAL_MODEL_TOKENS_PER_SECOND: "20",
    // The large-reel spec serves its video from a server of its own on 127.0.0.1.
    ALLOW_PRIVATE_URLS: "true",
    NEXT_TELEMETRY_DISABLED: "1",
    // Short enough that the Instagram Login spec can let a state expire; long enough for a busy machine to finish a login.
    META_LOGIN_STATE_TTL_S: String(LOGIN_STATE_TTL_S),
    UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES),
  });
  const logFile = path.join(dataDir, "stack.log");
  const stack = await startStack({ root, dataDir, env, output: { file: logFile } });
  (globalThis as { __e2eStack?: Stack }).__e2eStack = stack;
  const info: StackInfo = {
    url: stack.url,
    apiKey: stack.apiKey,
    tenantId: String(stack.env.API_KEYS).split(":")[0],
    logFile,
  };
  writeFileSync(STACK_FILE, JSON.stringify(info, null, 2));
  process.stdout.write(`e2e stack at ${stack.url} (logs in .test-data/e2e/stack.log)\n`);
}
