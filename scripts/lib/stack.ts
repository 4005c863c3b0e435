import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startMockBroker, type MockBroker } from "./kafka-mock";
import { startRedis, stopChild, type RedisServer } from "./redis-server";
import { assertNoUncaught } from "./uncaught";

/**
 * Dispatch's processes, started the way `npm start` runs them: embedded Redis and broker unless
 * REDIS_URL / KAFKA_BROKERS are set, the Next.js server, and WORKERS worker processes. The same
 * code starts the stack for end-to-end tests and benchmarks, so they exercise what users run.
 */
export interface StackOptions {
  root: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** `next dev` instead of the production build. */
  dev?: boolean;
  /** Where child output goes; "inherit" for npm start, a log file for tests. */
  output?: "inherit" | "ignore" | { file: string };
}

export interface Stack {
  url: string;
  apiKey: string;
  env: NodeJS.ProcessEnv;
  redis?: RedisServer;
  broker?: MockBroker;
  web: ManagedProcess;
  workers: ManagedProcess[];
  startWorker(extraEnv?: Record<string, string>): ManagedProcess;
  stop(): Promise<void>;
  /** The processes' shared log, when `output` is a file. */
  logFile?: string;
  /** Throws, quoting the lines, if a process logged an uncaught exception or unhandled rejection. */
  assertNoUncaught(): void;
}

export interface ManagedProcess {
  name: string;
  readonly child: ChildProcess;
  /** Kill (SIGKILL by default, as a crash) and leave it down. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again with the same command. */
  restart(): void;
  stop(): Promise<void>;
}

/** The dev API key of the embedded default, kept in the data dir so it survives restarts. */
export function devApiKeys(dataDir: string): string {
  const file = path.join(dataDir, "api-keys");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const keys = `demo:dk_${randomBytes(24).toString("base64url")}`;
  writeFileSync(file, `${keys}\n`, { mode: 0o600 });
  return keys;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const env: NodeJS.ProcessEnv = { ...opts.env, DATA_DIR: opts.dataDir };
  env.PORT ??= "3000";
  env.API_KEYS ??= devApiKeys(opts.dataDir);
  const embedded = !env.REDIS_URL && !env.KAFKA_BROKERS && !env.GRAPH_URL;
  let redis: RedisServer | undefined;
  let broker: MockBroker | undefined;
  const started: ManagedProcess[] = [];
  const logFile = typeof opts.output === "object" ? opts.output.file : undefined;
  try {
    if (!env.REDIS_URL) {
      redis = await startRedis({ dir: path.join(opts.dataDir, "redis") });
      env.REDIS_URL = redis.url;
    }
    if (!env.KAFKA_BROKERS) {
      broker = await startMockBroker();
      env.KAFKA_BROKERS = broker.bootstrap;
      env.KAFKA_EMBEDDED = "true";
    }
    if (embedded) env.ALLOW_PRIVATE_VIDEO_URLS ??= "true";

    const nextBin = path.join(opts.root, "node_modules/next/dist/bin/next");
    const webArgs = opts.dev ? [nextBin, "dev", "-p", env.PORT] : [nextBin, "start", "-p", env.PORT];
    const web = manage("web", process.execPath, webArgs, { ...env, NODE_ENV: opts.dev ? "development" : "production" }, opts);
    started.push(web);
    const workers: ManagedProcess[] = [];
    let nextWorker = 1;
    const startWorker = (extraEnv: Record<string, string> = {}) => {
      const id = nextWorker++;
      const worker = manage(`worker-${id}`, process.execPath, ["--import", "tsx", path.join(opts.root, "worker/index.ts")], { ...env, WORKER_ID: `worker-${id}`, ...extraEnv }, opts);
      workers.push(worker);
      started.push(worker);
      return worker;
    };
    for (let i = 0; i < Number(env.WORKERS ?? 1); i++) startWorker();

    const url = `http://127.0.0.1:${env.PORT}`;
    await waitForHealth(url, web, 120_000, Number(env.WORKERS ?? 1));
    const apiKey = String(env.API_KEYS).split(",")[0].split(":").slice(1).join(":");
    return {
      url,
      apiKey,
      env,
      redis,
      broker,
      web,
      workers,
      startWorker,
      logFile,
      assertNoUncaught() {
        if (logFile) assertNoUncaught(readFileSync(logFile, "utf8"), `the stack (${logFile})`);
      },
      async stop() {
        await Promise.all(started.map((p) => p.stop()));
        await broker?.stop();
        await redis?.stop();
      },
    };
  } catch (error) {
    await Promise.all(started.map((p) => p.stop()));
    await broker?.stop();
    await redis?.stop();
    throw error;
  }
}

function manage(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, opts: StackOptions): ManagedProcess {
  let child: ChildProcess;
  const spawnIt = () => {
    const out = opts.output ?? "inherit";
    if (typeof out === "object") {
      const fd = openSync(out.file, "a");
      child = spawn(command, args, { cwd: opts.root, env, stdio: ["ignore", fd, fd] });
    } else {
      child = spawn(command, args, { cwd: opts.root, env, stdio: ["ignore", out, out] });
    }
  };
  spawnIt();
  return {
    name,
    get child() {
      return child;
    },
    async kill(signal = "SIGKILL") {
      await stopChild(child, signal, 1000);
    },
    restart() {
      if (child.exitCode === null && child.signalCode === null) throw new Error(`${name} is still running`);
      spawnIt();
    },
    stop: () => stopChild(child, "SIGTERM", 15_000),
  };
}

/** Waits until the web server answers healthy and `workers` workers have said they are alive. */
export async function waitForHealth(url: string, web: ManagedProcess, timeoutMs: number, workers = 0): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (web.child.exitCode !== null) throw new Error(`the web server exited with code ${web.child.exitCode}`);
    try {
      const response = await fetch(`${url}/api/health`);
      last = await response.text();
      if (response.ok && (JSON.parse(last) as { workers: { count: number } }).workers.count >= workers) return;
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the web server was not healthy within ${timeoutMs / 1000} s: ${last}`);
}
