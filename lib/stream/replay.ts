import type { Parse, StreamHub } from "./stream-hub";

/**
 * What one feature's replayable stream is made of: a pub/sub channel for live messages, a stored
 * list of every message in seq order, and the message that ends the stream.
 */
export interface ReplaySource<T extends { seq: number }> {
  channel: string;
  parse: Parse<T>;
  /** The stored list, parsed, in seq order. */
  readStored(): Promise<T[]>;
  isEnd(message: T): boolean;
  /** The stored messages a client that has seen up to `after` gets; by default those with a greater seq. */
  startAt?(stored: T[], after: number): T[];
}

/**
 * One client's stream: what it missed (after `after`), then live messages, with no gap and no
 * duplicate. It subscribes before it reads the stored list and drops any live message whose seq it
 * already sent; after a Redis reconnection (the hub's `resync`) it reads the list again for what
 * was published meanwhile. It ends at an end message, at once when the stored list already ends
 * (a client that saw everything of a finished stream gets nothing and is closed), or when `signal`
 * aborts. Messages come in batches, whatever arrived since the last one, so a busy stream costs one
 * step of the generator per batch rather than per message.
 */
export async function* replay<T extends { seq: number }>(hub: StreamHub, source: ReplaySource<T>, after: number, signal: AbortSignal): AsyncGenerator<T[]> {
  const startAt = source.startAt ?? ((stored: T[], seen: number) => stored.filter((m) => m.seq > seen));
  let queue: T[] = [];
  let wake: (() => void) | undefined;
  let resyncs = 0;
  const listener = {
    message(message: T) {
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
  const unsubscribe = await hub.subscribe(source.channel, listener, source.parse);
  let lastSeq = after;
  let ended = false;
  /** The messages of `batch` not sent yet; live ones stop at the first end message. */
  const unsent = (batch: T[], live: boolean) => {
    const fresh: T[] = [];
    for (const message of batch) {
      if (message.seq <= lastSeq) continue;
      fresh.push(message);
      lastSeq = message.seq;
      if (live && source.isEnd(message)) {
        ended = true;
        break;
      }
    }
    return fresh;
  };
  /** What the stored list holds for this client; whether the list already ends decides, not an earlier end message in it. */
  const fromStored = async () => {
    const stored = await source.readStored();
    const missed = unsent(startAt(stored, lastSeq), false);
    const last = stored.at(-1);
    if (last && source.isEnd(last)) ended = true;
    return missed;
  };
  try {
    const stored = await fromStored();
    if (stored.length > 0) yield stored;
    while (!signal.aborted && !ended) {
      if (resyncs > 0) {
        // The subscription was lost for a while: catch up from the list, then go on live.
        let missed: T[];
        try {
          resyncs = 0;
          missed = await fromStored();
        } catch {
          resyncs++;
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        if (missed.length > 0) yield missed;
        continue;
      }
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const batch = unsent(queue, true);
      queue = [];
      if (batch.length > 0) yield batch;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await unsubscribe();
  }
}
