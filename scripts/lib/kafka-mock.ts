/**
 * Handle on the embedded Kafka-protocol broker (scripts/kafka-mock/kafka-mock.c,
 * librdkafka's mock cluster). Used by `npm start`, the integration tests and
 * the benchmarks; framework-free on purpose.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { ALL_TOPICS } from "../../lib/topics";

export interface MockBroker {
  /** "127.0.0.1:port[,127.0.0.1:port...]" */
  bootstrap: string;
  pid: number;
  /** Disconnects clients and refuses new connections; all brokers by default. Same address on `up()`. */
  down(brokerId?: number): Promise<void>;
  up(brokerId?: number): Promise<void>;
  /** Adds `ms` of latency to every response; all brokers by default. */
  rtt(ms: number, brokerId?: number): Promise<void>;
  /** The next `count` requests of `apiKey` (0 = Produce, 1 = Fetch, ...) fail with `errorCode`. */
  pushErrors(apiKey: number, count: number, errorCode: number): Promise<void>;
  /** Sends quit (then SIGTERM, then SIGKILL) and waits for the process to exit. */
  stop(): Promise<void>;
}

export interface MockBrokerOptions {
  topics?: { name: string; partitions: number }[];
  /** Number of brokers (ids 1..N). Default 1. */
  brokers?: number;
  /** Fixed listen port for broker 1 (broker N gets port + N - 1). Default: a free port. */
  port?: number;
}

const DIR = path.resolve(__dirname, "../kafka-mock");
const SOURCE = path.join(DIR, "kafka-mock.c");
const BINARY = path.join(DIR, "kafka-mock");
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

function rdkafkaFlags(): string[] {
  try {
    return execFileSync("pkg-config", ["--cflags", "--libs", "rdkafka"], { encoding: "utf8" })
      .trim()
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    return ["-lrdkafka"]; // no pkg-config (or no .pc file): the library may still be on the default path
  }
}

/** Compiles the broker if the binary is missing or older than its source; returns the binary path. */
export function buildMockBroker(): string {
  if (fs.existsSync(BINARY) && fs.statSync(BINARY).mtimeMs >= fs.statSync(SOURCE).mtimeMs) return BINARY;
  // Compile to a private name and rename, so concurrent builds never run a half-written binary.
  const tmp = path.join(DIR, `.kafka-mock.${process.pid}.tmp`);
  try {
    execFileSync("cc", ["-O2", "-o", tmp, SOURCE, ...rdkafkaFlags()], { stdio: ["ignore", "ignore", "pipe"] });
    fs.renameSync(tmp, BINARY);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `Could not compile the Kafka mock broker (${SOURCE}). It needs a C compiler and librdkafka with its mock API ` +
        `(Debian/Ubuntu: apt-get install build-essential librdkafka-dev pkg-config).\n${stderr || String(err)}`,
    );
  }
  return BINARY;
}

/** Starts the broker with the given topics (default: every topic in lib/topics.ts). */
export async function startMockBroker(opts: MockBrokerOptions = {}): Promise<MockBroker> {
  const bin = buildMockBroker();
  const topics = opts.topics ?? ALL_TOPICS;
  const args = [
    ...(opts.brokers ? ["--brokers", String(opts.brokers)] : []),
    ...(opts.port ? ["--port", String(opts.port)] : []),
    ...topics.map((t) => `${t.name}:${t.partitions}`),
  ];
  // stdin stays a pipe from us: when this process dies the pipe closes and the broker exits on EOF.
  const child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderrTail = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-4000);
    process.stderr.write(chunk.replace(/^(?=.)/gm, "[kafka-mock] "));
  });
  child.stdin.on("error", () => {}); // EPIPE after the child died is reported through "close"

  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once("close", () => {
      exited = true;
      resolve();
    });
  });
  const describeExit = () =>
    `kafka-mock exited (code ${child.exitCode}, signal ${child.signalCode})${stderrTail ? `: ${stderrTail.trim()}` : ""}`;

  // Replies arrive in order, one per command; `waiting` holds the resolver of the one in flight.
  let waiting: ((line: string | Error) => void) | null = null;
  const lines = readline.createInterface({ input: child.stdout });

  const bootstrap = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `kafka-mock did not start within ${START_TIMEOUT_MS} ms${stderrTail ? `: ${stderrTail.trim()}` : ""}`,
        ),
      );
    }, START_TIMEOUT_MS);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err); // no-op once started; the listener also keeps late errors from crashing us
    });
    void exitedPromise.then(() => {
      clearTimeout(timer);
      reject(new Error(describeExit()));
    });
    lines.once("line", (line) => {
      clearTimeout(timer);
      const m = /^bootstrap (\S+)$/.exec(line);
      if (m) resolve(m[1]);
      else {
        child.kill("SIGKILL");
        reject(new Error(`kafka-mock: unexpected first line: ${line}`));
      }
    });
  });

  lines.on("line", (line) => {
    const w = waiting;
    waiting = null;
    w?.(line);
  });
  void exitedPromise.then(() => {
    const w = waiting;
    waiting = null;
    w?.(new Error(describeExit()));
  });

  let queue: Promise<unknown> = Promise.resolve();
  const send = (command: string): Promise<void> => {
    const run = () =>
      new Promise<void>((resolve, reject) => {
        if (exited) return reject(new Error(describeExit()));
        waiting = (reply) => {
          if (reply instanceof Error) reject(reply);
          else if (reply === "ok") resolve();
          else reject(new Error(`kafka-mock ${command}: ${reply.replace(/^error /, "")}`));
        };
        child.stdin.write(`${command}\n`);
      });
    const result = queue.then(run, run);
    queue = result.catch(() => {});
    return result;
  };
  const exitsWithin = (ms: number) =>
    Promise.race([exitedPromise.then(() => true), new Promise<boolean>((r) => setTimeout(r, ms, false).unref())]);
  const id = (brokerId?: number) => (brokerId === undefined ? "" : ` ${brokerId}`);

  return {
    bootstrap,
    pid: child.pid!,
    down: (brokerId) => send(`down${id(brokerId)}`),
    up: (brokerId) => send(`up${id(brokerId)}`),
    rtt: (ms, brokerId) => send(`rtt ${ms}${id(brokerId)}`),
    pushErrors: (apiKey, count, errorCode) => send(`errors ${apiKey} ${count} ${errorCode}`),
    async stop() {
      if (exited) return;
      child.stdin.end("quit\n");
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        if (await exitsWithin(STOP_TIMEOUT_MS)) return;
        child.kill(signal);
      }
      await exitedPromise;
    },
  };
}
