import { execFileSync, spawn } from "node:child_process";
import { createRedis, createSubscriber } from "../../../lib/redis";
import { freePort } from "../../lib/redis-server";
import type { BenchContext } from "../lib/context";
import { load, type LoadResult } from "../lib/load";
import { sleep } from "../lib/stats";

export interface RawLimits {
  bareHttp: LoadResult;
  /** Messages a subscriber receives per second when a publisher pipelines PUBLISH. */
  pubsubPerSecond: number;
  pubsubMessages: number;
  /** One writer doing what StreamWriter did per delta (MULTI RPUSH PUBLISH EXEC), awaiting each. */
  sequentialWritesPerSecond: number;
  /** redis-benchmark PUBLISH at 50 clients, when the tool is installed. */
  redisBenchmarkPublish?: number;
}

const BODY = JSON.stringify({ tenant_id: "demo", model_name: "local-ngram", prompt: "The worker reads the log", max_tokens: 4 });
const BARE_SERVER = `
const http = require("node:http");
http.createServer((req, res) => {
  req.resume();
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json" }); res.end('{"ok":true}'); });
}).listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("listening\\n"));`;

/** What the machine allows, in the same run: a bare Node http server, and Redis pub/sub. */
export async function measureRawLimits(ctx: BenchContext, seconds: number): Promise<RawLimits> {
  const port = await freePort();
  const server = spawn(process.execPath, ["-e", BARE_SERVER], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve) => server.stdout.once("data", () => resolve()));
  let bareHttp: LoadResult;
  try {
    await load({ url: `http://127.0.0.1:${port}/`, duration: 2, method: "POST", body: BODY, headers: { "content-type": "application/json" } });
    bareHttp = await load({ url: `http://127.0.0.1:${port}/`, duration: seconds, method: "POST", body: BODY, headers: { "content-type": "application/json" } });
  } finally {
    server.kill();
  }
  ctx.log(`bare http: ${Math.round(bareHttp.rps)} req/s, p99 ${bareHttp.p99} ms`);

  const redisUrl = String(ctx.stack.env.REDIS_URL);
  const publisher = createRedis(redisUrl);
  const subscriber = createSubscriber(redisUrl);
  try {
    const message = JSON.stringify({ seq: 123, delta: " the worker", is_final: false });
    const total = 200_000 * Math.min(1, ctx.scale);
    let received = 0;
    let allReceived!: () => void;
    const done = new Promise<void>((resolve) => (allReceived = resolve));
    subscriber.on("message", () => {
      if (++received === total) allReceived();
    });
    await subscriber.subscribe("bench:raw");
    const started = performance.now();
    for (let sent = 0; sent < total; sent += 1000) {
      const pipeline = publisher.pipeline();
      for (let i = 0; i < 1000; i++) pipeline.publish("bench:raw", message);
      await pipeline.exec();
    }
    await Promise.race([done, sleep(60_000)]);
    const pubsubPerSecond = received / ((performance.now() - started) / 1000);
    ctx.log(`redis pub/sub: ${Math.round(pubsubPerSecond)} msg/s`);

    const writes = 5000;
    const writesStarted = performance.now();
    for (let i = 0; i < writes; i++) await publisher.multi().rpush("bench:raw:list", message).publish("bench:raw", message).exec();
    const sequentialWritesPerSecond = writes / ((performance.now() - writesStarted) / 1000);
    await publisher.del("bench:raw:list");
    ctx.log(`sequential MULTI RPUSH+PUBLISH: ${Math.round(sequentialWritesPerSecond)} /s`);

    return { bareHttp, pubsubPerSecond, pubsubMessages: total, sequentialWritesPerSecond, redisBenchmarkPublish: redisBenchmark(redisUrl) };
  } finally {
    publisher.disconnect();
    subscriber.disconnect();
  }
}

function redisBenchmark(redisUrl: string): number | undefined {
  const url = new URL(redisUrl);
  const args = ["-h", url.hostname, "-p", url.port || "6379", "-c", "50", "-n", "100000", "--csv", "PUBLISH", "bench:rb", "hello"];
  if (url.password) args.push("-a", decodeURIComponent(url.password));
  try {
    const out = execFileSync("redis-benchmark", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 60_000 });
    const line = out.trim().split("\n").pop() ?? "";
    const value = Number(line.split(",")[1]?.replace(/"/g, ""));
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
