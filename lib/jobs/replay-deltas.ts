import type { Redis } from "../redis";
import { jobKeys } from "./keys";
import { parseStreamMessage, type StreamMessage } from "./stream-message";
import type { StreamHub } from "./stream-hub";

/**
 * A job's stream for one client: first what it missed (after `after`), then live messages, with
 * no gap and no duplicate. It subscribes before reading the replay list, and drops any live
 * message whose seq it already sent. Text of an attempt that was started over is skipped: the
 * client starts from the last `reset`. Ends after the final message, or when `signal` aborts.
 */
export async function* replayDeltas(deps: { redis: Redis; hub: StreamHub }, jobId: string, after: number, signal: AbortSignal): AsyncGenerator<StreamMessage> {
  const queue: StreamMessage[] = [];
  let wake: (() => void) | undefined;
  let resyncs = 0;
  const listener = {
    message(raw: string) {
      const message = parseStreamMessage(raw);
      if (!message) return;
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
  const unsubscribe = await deps.hub.subscribe(jobKeys.stream(jobId), listener);
  const readStored = async () => (await deps.redis.lrange(jobKeys.events(jobId), 0, -1)).map(parseStreamMessage).filter((m): m is StreamMessage => !!m);
  try {
    let lastSeq = after;
    for (const message of startAt(await readStored(), after)) {
      yield message;
      lastSeq = message.seq;
      if (message.is_final) return;
    }
    while (!signal.aborted) {
      if (resyncs > 0) {
        // The subscription was lost for a while: catch up from the list, then go on live.
        try {
          const missed = startAt(await readStored(), lastSeq);
          resyncs = 0;
          queue.unshift(...missed);
        } catch {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
      }
      const message = queue.shift();
      if (!message) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (message.seq <= lastSeq) continue;
      yield message;
      lastSeq = message.seq;
      if (message.is_final) return;
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
