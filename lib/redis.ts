import type { Socket } from "node:net";
import Redis, { type RedisOptions } from "ioredis";

/**
 * A Redis client that reconnects on its own and fails commands fast while Redis is away, instead
 * of queueing them for ever: callers answer 503 and retry, workers retry with backoff.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 2,
    connectTimeout: 2000,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(50 * 2 ** times, 1000),
    lazyConnect: false,
    ...options,
  });
  redis.on("connect", () => writeOncePerTurn((redis as unknown as { stream: Socket }).stream));
  return redis;
}

/**
 * ioredis writes each command to the socket as it is called: a worker running many jobs calls
 * several in one turn of the event loop, and each was a system call of its own (the largest single
 * cost in a profile of the backlog drain). The socket is corked at its first write of a turn and
 * uncorked when the turn's synchronous work and microtasks are done, so the turn's commands leave
 * in one write. Nothing waits: a lone command is sent at the end of the turn that called it.
 * Patched on each connection, as ioredis opens a new socket when it reconnects.
 */
export function writeOncePerTurn(socket: Socket): void {
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Socket["write"];
}

/**
 * The web server's command connection: a command waits at most ~1.5 s for Redis (queued while it
 * reconnects, then refused), so a request answers 503 within 2 s of an outage instead of hanging
 * or failing with a 500, and the same client recovers by itself when Redis is back.
 */
export function createWebRedis(url: string): Redis {
  return createRedis(url, { commandTimeout: 1500, maxRetriesPerRequest: 1 });
}

/** How long a client told "Redis is away" waits before it tries again. */
export const REDIS_RETRY_AFTER_S = 2;

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const CONNECTION_MESSAGES = [
  /^Command timed out/,
  /^Connection is closed/,
  /^Stream isn't writeable/,
  /^Reached the max retries per request/,
  /^LOADING /,
  /^MASTERDOWN /,
];

/** True for the errors ioredis gives while Redis is unreachable (refused, timed out, reconnecting, loading). */
export function isRedisUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e.name === "MaxRetriesPerRequestError") return true;
    if (CONNECTION_CODES.has((e as NodeJS.ErrnoException).code ?? "")) return true;
    if (CONNECTION_MESSAGES.some((pattern) => pattern.test(e instanceof Error ? e.message : ""))) return true;
  }
  return false;
}

/** Runs a pipeline and returns its replies; a failed command throws (ioredis only reports it in the reply). */
export async function execPipeline(pipeline: ReturnType<Redis["pipeline"]>): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
  return results.map(([, value]) => value);
}

/** A connection for SUBSCRIBE: it may not run other commands, so it never shares with one that does. */
export function createSubscriber(url: string): Redis {
  return createRedis(url, { maxRetriesPerRequest: null });
}

export type { Redis };
