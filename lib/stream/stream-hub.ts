import type { Redis } from "../redis";

/** Gets each message of the channel; `resync` after a reconnection, when messages may have been missed. */
export interface Listener<T = string> {
  message(message: T): void;
  resync?(): void;
}

/** Turns a channel's raw message into what its listeners get; undefined drops the message. */
export type Parse<T> = (raw: string) => T | undefined;

interface Channel {
  listeners: Set<Listener<unknown>>;
  parse?: Parse<unknown>;
}

/**
 * One Redis subscriber connection shared by every stream client of a process: channels are
 * subscribed while at least one client listens and released when the last one leaves. A message
 * is parsed once per channel, not once per listener.
 */
export class StreamHub {
  private readonly channels = new Map<string, Channel>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private ready: Promise<void> | undefined;

  constructor(private readonly subscriber: Redis) {
    subscriber.on("message", (name: string, raw: string) => {
      const channel = this.channels.get(name);
      if (!channel) return;
      const message = channel.parse ? channel.parse(raw) : raw;
      if (message === undefined) return;
      for (const listener of channel.listeners) listener.message(message);
    });
    // ioredis subscribes again by itself after a reconnection; what was published meanwhile is
    // only in the replay lists, so every listener is told to read its list again.
    let lost = false;
    subscriber.on("close", () => (lost = true));
    subscriber.on("ready", () => {
      if (!lost) return;
      lost = false;
      for (const channel of this.channels.values()) for (const listener of channel.listeners) listener.resync?.();
    });
  }

  /**
   * Resolves once Redis confirmed the subscription, so nothing published afterwards is missed.
   * Without `parse` listeners get the raw string; a channel keeps the `parse` of its first listener.
   */
  subscribe(channel: string, onMessage: Listener | ((raw: string) => void)): Promise<() => Promise<void>>;
  subscribe<T>(
    channel: string,
    onMessage: Listener<T> | ((message: T) => void),
    parse: Parse<T>,
  ): Promise<() => Promise<void>>;
  async subscribe<T>(
    name: string,
    onMessage: Listener<T> | ((message: T) => void),
    parse?: Parse<T>,
  ): Promise<() => Promise<void>> {
    const listener = (typeof onMessage === "function" ? { message: onMessage } : onMessage) as Listener<unknown>;
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { listeners: new Set(), parse };
      this.channels.set(name, channel);
      const subscribe = () => this.subscriber.subscribe(name);
      const now = this.subscriber.status === "ready" || this.subscriber.status === "end";
      this.pending.set(name, now ? subscribe() : this.untilReady().then(subscribe));
    }
    channel.listeners.add(listener);
    try {
      await this.pending.get(name);
    } catch (error) {
      this.remove(name, listener);
      throw error;
    }
    return async () => {
      // The client is gone either way; a channel left subscribed only brings messages no listener takes.
      if (this.remove(name, listener)) await this.subscriber.unsubscribe(name).catch(() => {});
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
    return this.channels.size;
  }

  private remove(name: string, listener: Listener<unknown>): boolean {
    const channel = this.channels.get(name);
    if (!channel) return false;
    channel.listeners.delete(listener);
    if (channel.listeners.size > 0) return false;
    this.channels.delete(name);
    this.pending.delete(name);
    return true;
  }
}
