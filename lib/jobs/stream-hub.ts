import type { Redis } from "../redis";

/** Gets each message of the channel; `resync` after a reconnection, when messages may have been missed. */
export interface Listener {
  message(raw: string): void;
  resync?(): void;
}

/**
 * One Redis subscriber connection shared by every stream client of a process: channels are
 * subscribed while at least one client listens and released when the last one leaves.
 */
export class StreamHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private ready: Promise<void> | undefined;

  constructor(private readonly subscriber: Redis) {
    subscriber.on("message", (channel: string, message: string) => {
      for (const listener of this.listeners.get(channel) ?? []) listener.message(message);
    });
    // ioredis subscribes again by itself after a reconnection; what was published meanwhile is
    // only in the replay lists, so every listener is told to read its list again.
    let lost = false;
    subscriber.on("close", () => (lost = true));
    subscriber.on("ready", () => {
      if (!lost) return;
      lost = false;
      for (const set of this.listeners.values()) for (const listener of set) listener.resync?.();
    });
  }

  /** Resolves once Redis confirmed the subscription, so nothing published afterwards is missed. */
  async subscribe(channel: string, onMessage: Listener | ((raw: string) => void)): Promise<() => Promise<void>> {
    const listener: Listener = typeof onMessage === "function" ? { message: onMessage } : onMessage;
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const subscribe = () => this.subscriber.subscribe(channel);
      const now = this.subscriber.status === "ready" || this.subscriber.status === "end";
      this.pending.set(channel, now ? subscribe() : this.untilReady().then(subscribe));
    }
    set.add(listener);
    try {
      await this.pending.get(channel);
    } catch (error) {
      this.remove(channel, listener);
      throw error;
    }
    return async () => {
      if (this.remove(channel, listener)) await this.subscriber.unsubscribe(channel).catch(() => {});
    };
  }

  /**
   * ioredis writes SUBSCRIBE as soon as the socket connects, before its ready check; the check's
   * INFO then fails on a connection already in subscriber mode, and every subscription pending on
   * it is rejected (the first burst of stream clients of a process got "the stream broke"). So
   * the hub subscribes only on a ready connection; ioredis itself subscribes again after a reconnection.
   */
  private untilReady(): Promise<void> {
    this.ready ??= new Promise<void>((resolve) =>
      this.subscriber.once("ready", () => {
        this.ready = undefined;
        resolve();
      }),
    );
    return this.ready;
  }

  /** How many channels are held, for health and tests. */
  get channelCount(): number {
    return this.listeners.size;
  }

  private remove(channel: string, listener: Listener): boolean {
    const set = this.listeners.get(channel);
    if (!set) return false;
    set.delete(listener);
    if (set.size > 0) return false;
    this.listeners.delete(channel);
    this.pending.delete(channel);
    return true;
  }
}
