import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";

export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
  /** SIGKILL, as a crash: only what the AOF already holds survives. */
  kill(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// util-linux's setpriv (Essential on Debian) execs redis-server with a parent-death signal, so a
// parent killed outright (SIGKILL, a test runner's global limit) takes its Redis with it; the pid
// stays redis-server's own, which the fault tests kill.
const SETPRIV = "/usr/bin/setpriv";

/**
 * Debian's redis-server as a child process, AOF on, data in `dir`, bound to loopback. It dies with
 * its parent (see SETPRIV) so no orphan outlives `npm start` or a test run.
 */
export async function startRedis(opts: { dir: string; port?: number }): Promise<RedisServer> {
  const dir = path.resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const command = existsSync(SETPRIV) ? [SETPRIV, "--pdeathsig", "TERM", "--", "redis-server"] : ["redis-server"];
  const child = spawn(
    command[0],
    [
      ...command.slice(1),
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      "everysec",
      "--save",
      "",
      "--daemonize",
      "no",
      "--protected-mode",
      "yes",
      "--loglevel",
      "warning",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await waitForReady(child, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop: () => stopChild(child),
    kill: () => stopChild(child, "SIGKILL"),
  };
}

async function waitForReady(child: ChildProcess, port: number): Promise<void> {
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${output.trim()}`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`redis-server did not answer on port ${port} within 10 s: ${output.trim()}`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setTimeout(500);
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (d) => {
      socket.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
    socket.on("error", () => resolve(false));
    socket.on("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = "SIGTERM",
  graceMs = 5000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
