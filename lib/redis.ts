import Redis, { type RedisOptions } from "ioredis";

/**
 * A Redis client that reconnects on its own and fails commands fast while Redis is away, instead
 * of queueing them for ever: callers answer 503 and retry, workers retry with backoff.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 2,
    connectTimeout: 2000,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(50 * 2 ** times, 1000),
    lazyConnect: false,
    ...options,
  });
}

/** A connection for SUBSCRIBE: it may not run other commands, so it never shares with one that does. */
export function createSubscriber(url: string): Redis {
  return createRedis(url, { maxRetriesPerRequest: null });
}

export type { Redis };
