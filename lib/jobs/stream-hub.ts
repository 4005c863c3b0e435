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
      this.pending.set(channel, this.subscriber.subscribe(channel));
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
