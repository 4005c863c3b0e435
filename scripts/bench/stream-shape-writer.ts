/**
 * The writing side of the stream-shape figure (scripts/bench/figures/stream-shapes.ts): N jobs each
 * giving a delta at a steady pace, written either as Dispatch writes a job's stream (StreamWriter:
 * a replay list and a channel, every job's messages of a turn in one script) or as one Redis
 * Stream per job (XADD, batched per turn in the same way). Each delta's text is the time it was
 * given, so the reader can tell the latency. Driven over IPC: `{ shape, n, seconds, tokensPerSecond }`
 * in, `{ deltas, cpuMs }` out once every delta is written.
 */
import { OPEN_JOB_TTL_S } from "../../lib/jobs/keys";
import { StreamWriter } from "../../lib/jobs/stream-writer";
import { createRedis, type Redis } from "../../lib/redis";
import { redisScript } from "../../lib/redis-script";

export type StreamShape = "list+channel" | "stream";
export interface ShapeRun {
  shape: StreamShape;
  n: number;
  seconds: number;
  tokensPerSecond: number;
}

/** The bench's keys for job i in either shape (a prefix of their own, deleted after each run). */
export const shapeKeys = {
  jobId: (i: number) => `bench-shape-${i}`,
  stream: (i: number) => `bench:shape:stream:${i}`,
};

/** The time a delta was given, on a clock both processes share (ms since the epoch, fractional). */
export const wallNow = () => performance.timeOrigin + performance.now();

// One Redis Stream per job: every job's messages of a turn in one script, as StreamWriter batches
// its appends, and the same open-job expiry on a job's first message.
// ARGV: the expiry (s), then each message's text and whether it is its job's first (1 or 0).
const XADD = redisScript(`
for i, key in ipairs(KEYS) do
  redis.call('XADD', key, '*', 'm', ARGV[2 * i])
  if ARGV[2 * i + 1] == '1' then redis.call('EXPIRE', key, ARGV[1]) end
end
return #KEYS`);

function streamWriter(redis: Redis) {
  let batch: { key: string; raw: string; first: boolean }[] = [];
  let written: Promise<unknown> | undefined;
  const flush = () => {
    const messages = batch;
    batch = [];
    written = undefined;
    return XADD.run(
      redis,
      messages.map((m) => m.key),
      [OPEN_JOB_TTL_S, ...messages.flatMap((m) => [m.raw, m.first ? 1 : 0])],
    );
  };
  return (i: number, seq: number, delta: string) => {
    batch.push({ key: shapeKeys.stream(i), raw: JSON.stringify({ seq, delta, is_final: false }), first: seq === 1 });
    written ??= new Promise((resolve, reject) => setImmediate(() => flush().then(resolve, reject)));
    return written;
  };
}

async function run(redis: Redis, { shape, n, seconds, tokensPerSecond }: ShapeRun): Promise<number> {
  const xadd = shape === "stream" ? streamWriter(redis) : undefined;
  const perJob = Math.round(seconds * tokensPerSecond);
  const gapMs = 1000 / tokensPerSecond;
  let deltas = 0;
  // The jobs start spread over one gap, as a worker's running jobs would be.
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, (i * gapMs) / n));
      const writer = xadd ? undefined : StreamWriter.continueAfter(redis, shapeKeys.jobId(i), 0);
      const start = performance.now();
      for (let seq = 1; seq <= perJob; seq++) {
        const delta = ` ${wallNow().toFixed(3)}`;
        await (xadd ? xadd(i, seq, delta) : writer!.delta(delta));
        deltas++;
        const due = start + seq * gapMs - performance.now();
        if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
      }
      await writer?.flush();
    }),
  );
  return deltas;
}

if (process.send) {
  const redis = createRedis(String(process.env.REDIS_URL));
  process.on("message", (message: ShapeRun) => {
    const cpu0 = process.cpuUsage();
    run(redis, message).then(
      (deltas) => {
        const cpu = process.cpuUsage(cpu0);
        process.send!({ deltas, cpuMs: (cpu.user + cpu.system) / 1000 });
      },
      (error) => {
        process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
  });
  process.send({ ready: true });
}
