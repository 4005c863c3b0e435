import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_METRICS_PORT, parseConfig } from "../../lib/config";
import { modelSettings } from "../../lib/jobs/list-models";
import { startMockBroker, type MockBroker } from "./kafka-mock";
import { startRedis, stopChild, type RedisServer } from "./redis-server";
import { assertNoUncaught } from "./uncaught";

const KEEP_ALIVE_TIMEOUT_MS = 65_000;

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
  /** The address the web server listens on. */
  host: string;
  /** The first key of API_KEYS. */
  apiKey: string;
  /** True when Dispatch made the key (API_KEYS unset), so it may be shown; an operator's keys never are. */
  apiKeyGenerated: boolean;
  env: NodeJS.ProcessEnv;
  redis?: RedisServer;
  broker?: MockBroker;
  /**
   * Replaces the embedded broker with a new, empty one on the same port (clients reconnect). Its
   * fetches scan a partition's log from the start (librdkafka 2.0's mock keeps no index), so a
   * broker that has taken many produce requests serves each fetch more slowly than a new one.
   */
  restartBroker(): Promise<void>;
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

/** The generation consumer's fetch long-poll on the embedded broker (KAFKA_FETCH_WAIT_MS). */
export const EMBEDDED_FETCH_WAIT_MS = 5;

/** The dev API key of the embedded default, kept in the data dir so it survives restarts. */
export function devApiKeys(dataDir: string): string {
  const file = path.join(dataDir, "api-keys");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const keys = `demo:dk_${randomBytes(24).toString("base64url")}`;
  writeFileSync(file, `${keys}\n`, { mode: 0o600 });
  return keys;
}

/** Fully embedded: nothing of Dispatch reaches outside this machine, so it listens on loopback only. */
export function isEmbedded(env: NodeJS.ProcessEnv): boolean {
  return !env.REDIS_URL && !env.KAFKA_BROKERS && !env.GRAPH_URL;
}

/**
 * Validates the environment the web server and the workers will get, before anything starts, so a
 * bad value stops `npm start` at once with the variable named rather than a server answering 500.
 * REDIS_URL and KAFKA_BROKERS, when unset, stand for the embedded parts started later.
 */
export function checkStackEnv(env: NodeJS.ProcessEnv): void {
  const filled = {
    ...env,
    API_KEYS: env.API_KEYS || "check:0123456789abcdef",
    REDIS_URL: env.REDIS_URL || "redis://127.0.0.1:6379",
    KAFKA_BROKERS: env.KAFKA_BROKERS || "127.0.0.1:9092",
  };
  modelSettings(parseConfig(filled));
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  checkStackEnv(opts.env);
  const env: NodeJS.ProcessEnv = { ...opts.env, DATA_DIR: opts.dataDir };
  env.PORT ||= "3000";
  const apiKeyGenerated = !env.API_KEYS;
  env.API_KEYS ||= devApiKeys(opts.dataDir);
  const embedded = isEmbedded(env);
  env.HOST ||= embedded ? "127.0.0.1" : "0.0.0.0";
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
      // The mock holds an empty fetch for the whole long-poll and does not answer it early when a
      // command arrives, as a real broker does: an idle worker's next job waited half the 50 ms on
      // average. 5 ms keeps time to first token within ~2.5 ms of a real broker's, for 200 empty
      // fetches a second while idle: an idle embedded stack takes ~19 % of a core (15 % at 10 ms;
      // scripts/bench/NOTES.md measures both).
      env.KAFKA_FETCH_WAIT_MS ||= String(EMBEDDED_FETCH_WAIT_MS);
      // The mock broker keeps a bounded log per partition, in memory: the audit log's durable copy
      // goes to DATA_DIR (an operator's AUDIT_ARCHIVE_DIR, an empty one too, wins).
      env.AUDIT_ARCHIVE_DIR ??= path.join(opts.dataDir, "audit");
    }

    const nextBin = path.join(opts.root, "node_modules/next/dist/bin/next");
    const webArgs = [nextBin, opts.dev ? "dev" : "start", "-H", env.HOST, "-p", env.PORT];
    // Node's default of 5 s closes an idle keep-alive socket just as a client may reuse it (the
    // client sees ECONNRESET: an e2e request 5 s after sign-in did); 65 s also outlasts the 60 s
    // idle timeout of common load balancers, so they, not Dispatch, close idle connections.
    if (!opts.dev) webArgs.push("--keepAliveTimeout", String(KEEP_ALIVE_TIMEOUT_MS));
    const web = manage(
      "web",
      process.execPath,
      webArgs,
      { ...env, NODE_ENV: opts.dev ? "development" : "production" },
      opts,
    );
    started.push(web);
    const workers: ManagedProcess[] = [];
    let nextWorker = 1;
    // Each worker of this machine its own metrics port: METRICS_PORT, the next one, and so on.
    const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : DEFAULT_METRICS_PORT;
    const startWorker = (extraEnv: Record<string, string> = {}) => {
      const id = nextWorker++;
      const ports = metricsPort ? { METRICS_PORT: String(metricsPort + id - 1) } : {};
      const worker = manage(
        `worker-${id}`,
        process.execPath,
        ["--import", "tsx", path.join(opts.root, "worker/index.ts")],
        { ...env, WORKER_ID: `worker-${id}`, ...ports, ...extraEnv },
        opts,
      );
      workers.push(worker);
      started.push(worker);
      return worker;
    };
    for (let i = 0; i < Number(env.WORKERS ?? 1); i++) startWorker();

    const url = `http://${localAddress(env.HOST)}:${env.PORT}`;
    await waitForHealth(url, web, 120_000, Number(env.WORKERS ?? 1), workers);
    const apiKey = String(env.API_KEYS).split(",")[0].split(":").slice(1).join(":");
    return {
      url,
      host: env.HOST,
      apiKey,
      apiKeyGenerated,
      env,
      redis,
      get broker() {
        return broker;
      },
      async restartBroker() {
        if (!broker) throw new Error("the stack runs against KAFKA_BROKERS, not an embedded broker");
        const port = Number(broker.bootstrap.split(",")[0].split(":").pop());
        await broker.stop();
        broker = await startMockBroker({ port });
      },
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

function manage(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: StackOptions,
): ManagedProcess {
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

/** Where this machine reaches a server bound to `host`: loopback for the wildcard addresses. */
function localAddress(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "localhost") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Waits until the web server answers healthy and `workers` workers have said they are alive. A
 * process of the stack that exits meanwhile (a bad setting it alone checks, a port taken) fails
 * the start at once rather than at the deadline.
 */
export async function waitForHealth(
  url: string,
  web: ManagedProcess,
  timeoutMs: number,
  workers = 0,
  watched: ManagedProcess[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    for (const p of [web, ...watched]) {
      const { exitCode, signalCode } = p.child;
      if (exitCode !== null || signalCode !== null)
        throw new Error(
          `${p.name === "web" ? "the web server" : p.name} exited during start-up (${signalCode ?? `code ${exitCode}`}); its output above says why`,
        );
    }
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
