import type { Redis } from "../redis";
import { replay, type ReplaySource } from "../stream/replay";
import type { StreamHub } from "../stream/stream-hub";
import { jobKeys } from "./keys";
import { parseStreamMessage, type StreamMessage } from "./stream-message";

/**
 * A job's stream for one client (lib/stream/replay.ts): its deltas after `after`, then live ones,
 * up to the final message. Text of an attempt that was started over is skipped: the client
 * starts from the last `reset`.
 */
export function replayDeltas(
  deps: { redis: Redis; hub: StreamHub },
  jobId: string,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<StreamMessage[]> {
  return replay(deps.hub, { ...jobStreamSource(deps.redis, jobId), startAt }, after, signal);
}

/**
 * A job's stream as lib/stream/replay reads it, every message from the first: for a reader that
 * numbers what it derives from them (lib/responses) and so must see the attempts a reset dropped too.
 */
export function jobStreamSource(redis: Redis, jobId: string): ReplaySource<StreamMessage> {
  return {
    channel: jobKeys.stream(jobId),
    parse: parseStreamMessage,
    readStored: async () =>
      (await redis.lrange(jobKeys.events(jobId), 0, -1)).map(parseStreamMessage).filter((m): m is StreamMessage => !!m),
    isEnd: (message) => message.is_final,
  };
}

/** The stored messages a client that has seen up to `after` should get. */
export function startAt(stored: StreamMessage[], after: number): StreamMessage[] {
  let lastReset = 0;
  for (const m of stored) if (m.reset) lastReset = m.seq;
  const from = lastReset > after ? lastReset : after + 1;
  return stored.filter((m) => m.seq >= from);
}

/** The SSE frame of one stream message: `id: seq`, `event: delta` (or `reset`), JSON data. */
export function deltaFrame(message: StreamMessage): string {
  const { seq, reset, ...data } = message;
  return `id: ${seq}\nevent: ${reset ? "reset" : "delta"}\ndata: ${JSON.stringify(data)}\n\n`;
}
