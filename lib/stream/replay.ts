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
export async function* replay<T extends { seq: number }>(
  hub: StreamHub,
  source: ReplaySource<T>,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<T[]> {
  const cursor = new ReplayCursor(source, after);
  const live = new LiveInbox<T>();
  const onAbort = () => live.wake();
  signal.addEventListener("abort", onAbort);
  const unsubscribe = await hub.subscribe(source.channel, live.listener, source.parse);
  try {
    const stored = await cursor.fromStored();
    if (stored.length > 0) yield stored;
    while (!signal.aborted && !cursor.ended) {
      let batch: T[];
      if (live.resyncs > 0) batch = await catchUp(cursor, live);
      else if (live.queue.length === 0) batch = await live.wait();
      else batch = cursor.unsent(live.take(), true);
      if (batch.length > 0) yield batch;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await unsubscribe();
  }
}

/** What one client has been sent: the last seq, and whether its stream has ended. */
class ReplayCursor<T extends { seq: number }> {
  ended = false;
  private readonly startAt: (stored: T[], after: number) => T[];

  constructor(
    private readonly source: ReplaySource<T>,
    private lastSeq: number,
  ) {
    this.startAt = source.startAt ?? ((stored, seen) => stored.filter((m) => m.seq > seen));
  }

  /** The messages of `batch` not sent yet; live ones stop at the first end message. */
  unsent(batch: T[], live: boolean): T[] {
    const fresh: T[] = [];
    for (const message of batch) {
      if (message.seq <= this.lastSeq) continue;
      fresh.push(message);
      this.lastSeq = message.seq;
      if (live && this.source.isEnd(message)) {
        this.ended = true;
        break;
      }
    }
    return fresh;
  }

  /** What the stored list holds for this client; whether the list already ends decides, not an earlier end message in it. */
  async fromStored(): Promise<T[]> {
    const stored = await this.source.readStored();
    const missed = this.unsent(this.startAt(stored, this.lastSeq), false);
    const last = stored.at(-1);
    if (last && this.source.isEnd(last)) this.ended = true;
    return missed;
  }
}

/** Live messages and resyncs from the hub, and one waiter woken by either (or by the abort). */
class LiveInbox<T> {
  queue: T[] = [];
  resyncs = 0;
  private waiter: (() => void) | undefined;
  readonly listener = {
    message: (message: T) => {
      this.queue.push(message);
      this.wake();
    },
    resync: () => {
      this.resyncs++;
      this.wake();
    },
  };

  wake(): void {
    this.waiter?.();
  }

  /** Resolves, with nothing, at the next message, resync or abort. */
  async wait(): Promise<T[]> {
    await new Promise<void>((resolve) => (this.waiter = resolve));
    this.waiter = undefined;
    return [];
  }

  take(): T[] {
    const taken = this.queue;
    this.queue = [];
    return taken;
  }
}

/** The subscription was lost for a while: catch up from the list, then go on live. */
async function catchUp<T extends { seq: number }>(cursor: ReplayCursor<T>, live: LiveInbox<T>): Promise<T[]> {
  live.resyncs = 0;
  try {
    return await cursor.fromStored();
  } catch {
    // Redis is not back yet: count the resync again and read the list a moment later.
    live.resyncs++;
    await new Promise((resolve) => setTimeout(resolve, 200));
    return [];
  }
}
