import type { Redis } from "../redis";
import { jobKeys } from "./keys";
import { parseStreamMessage, type StreamMessage } from "./stream-message";
import type { StreamHub } from "./stream-hub";

/**
 * A job's stream for one client: first what it missed (after `after`), then live messages, with
 * no gap and no duplicate. It subscribes before reading the replay list, and drops any live
 * message whose seq it already sent. Text of an attempt that was started over is skipped: the
 * client starts from the last `reset`. Ends after the final message, or when `signal` aborts.
 * Messages come in batches: whatever arrived since the last one, in seq order, so a busy stream
 * costs one step of the generator per batch rather than per delta.
 */
export async function* replayDeltas(deps: { redis: Redis; hub: StreamHub }, jobId: string, after: number, signal: AbortSignal): AsyncGenerator<StreamMessage[]> {
  let queue: StreamMessage[] = [];
  let wake: (() => void) | undefined;
  let resyncs = 0;
  const listener = {
    message(message: StreamMessage) {
      queue.push(message);
      wake?.();
    },
    resync() {
      resyncs++;
      wake?.();
    },
  };
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  const unsubscribe = await deps.hub.subscribe(jobKeys.stream(jobId), listener, parseStreamMessage);
  const readStored = async () => (await deps.redis.lrange(jobKeys.events(jobId), 0, -1)).map(parseStreamMessage).filter((m): m is StreamMessage => !!m);
  let lastSeq = after;
  /** The messages of `batch` not sent yet, up to the final one. */
  const unsent = (batch: StreamMessage[]) => {
    const fresh: StreamMessage[] = [];
    for (const message of batch) {
      if (message.seq <= lastSeq) continue;
      fresh.push(message);
      lastSeq = message.seq;
      if (message.is_final) break;
    }
    return fresh;
  };
  try {
    const stored = unsent(startAt(await readStored(), after));
    if (stored.length > 0) yield stored;
    if (stored.at(-1)?.is_final) return;
    while (!signal.aborted) {
      if (resyncs > 0) {
        // The subscription was lost for a while: catch up from the list, then go on live.
        try {
          const missed = startAt(await readStored(), lastSeq);
          resyncs = 0;
          queue = [...missed, ...queue];
        } catch {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
      }
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const batch = unsent(queue);
      queue = [];
      if (batch.length > 0) yield batch;
      if (batch.at(-1)?.is_final) return;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await unsubscribe();
  }
}

/** The stored messages a client that has seen up to `after` should get. */
export function startAt(stored: StreamMessage[], after: number): StreamMessage[] {
  let lastReset = 0;
  for (const m of stored) if (m.reset) lastReset = m.seq;
  const from = lastReset > after ? lastReset : after + 1;
  return stored.filter((m) => m.seq >= from);
}
