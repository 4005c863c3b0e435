import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { replayDeltas } from "@/lib/jobs/replay-deltas";
import type { StreamMessage } from "@/lib/jobs/stream-message";
import type { PublicationEvent } from "@/lib/reels/publication";
import { publicationKeys } from "@/lib/reels/publication-record";
import { replayPublicationEvents } from "@/lib/reels/replay-publication-events";
import type { Redis } from "@/lib/redis";
import { OpenStreams } from "@/lib/stream/open-streams";
import { StreamHub } from "@/lib/stream/stream-hub";

/** A subscriber connection that can drop and come back, as ioredis's does after a Redis restart. */
class FakeSubscriber extends EventEmitter {
  status = "ready";
  async subscribe() {}
  async unsubscribe() {}
  reconnect() {
    this.emit("close");
    this.emit("ready");
  }
}

function setup(stored: string[]) {
  const subscriber = new FakeSubscriber();
  const hub = new StreamHub(subscriber as unknown as Redis);
  const redis = { lrange: async () => [...stored] } as unknown as Redis;
  return { hub, redis, stored, subscriber };
}

const d = (seq: number, delta: string, is_final = false): StreamMessage => ({ seq, delta, is_final });
const ev = (seq: number, status: string): PublicationEvent =>
  ({ seq, kind: "step", status, step: { name: "create" } }) as unknown as PublicationEvent;
const within = <T>(promise: Promise<T>, ms = 1000) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms)),
  ]);

describe("a stream of something already finished", () => {
  it("closes at once for a job client whose Last-Event-ID is at or past the final seq", async () => {
    const { hub, redis } = setup([d(1, "a"), d(2, "b"), d(3, "", true)].map((m) => JSON.stringify(m)));
    for (const after of [3, 7]) {
      const stream = replayDeltas({ redis, hub }, "j", after, new AbortController().signal);
      expect((await within(stream.next())).done).toBe(true);
    }
    expect(hub.channelCount).toBe(0);
  });

  it("closes at once for a settled publication, and goes on past an earlier TIMED_OUT that a resume moved on from", async () => {
    const { hub, redis, stored } = setup(
      [ev(1, "CREATING"), ev(2, "TIMED_OUT"), ev(3, "PROCESSING")].map((e) => JSON.stringify(e)),
    );
    const open = replayPublicationEvents({ redis, hub }, "p", 0, new AbortController().signal);
    expect(((await open.next()).value as PublicationEvent[]).map((e) => e.seq)).toEqual([1, 2, 3]);
    void open.return(undefined);
    stored.push(JSON.stringify(ev(4, "PUBLISHED")));
    const done = replayPublicationEvents({ redis, hub }, "p", 4, new AbortController().signal);
    expect((await within(done.next())).done).toBe(true);
  });
});

describe("a reel events stream after a Redis reconnection", () => {
  it("reads the timeline again and sends what was published while the subscription was lost", async () => {
    const { hub, redis, stored, subscriber } = setup([ev(1, "CREATING")].map((e) => JSON.stringify(e)));
    const stream = replayPublicationEvents({ redis, hub }, "p", 0, new AbortController().signal);
    expect(((await stream.next()).value as PublicationEvent[]).map((e) => e.seq)).toEqual([1]);
    const next = stream.next();
    // Published while the subscriber was away: only the list has them.
    stored.push(JSON.stringify(ev(2, "PROCESSING")), JSON.stringify(ev(3, "PUBLISHED")));
    subscriber.reconnect();
    expect(((await within(next)).value as PublicationEvent[]).map((e) => e.seq)).toEqual([2, 3]);
    expect((await within(stream.next())).done).toBe(true);
    // Live messages after the catch-up are still deduplicated by seq.
    subscriber.emit("message", publicationKeys.stream("p"), JSON.stringify(ev(3, "PUBLISHED")));
    expect(hub.channelCount).toBe(0);
  });
});

describe("open streams per tenant", () => {
  const source = (signal: AbortSignal) =>
    (async function* () {
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      yield [] as string[];
    })();

  it("refuses a tenant's stream past the cap with 429 and Retry-After, counts each tenant apart, and frees a slot when a stream ends", async () => {
    const streams = new OpenStreams(2);
    const clients = [new AbortController(), new AbortController()];
    const responses = clients.map((c) => streams.respond("acme", source, String, c.signal));
    expect(streams.count("acme")).toBe(2);
    let refused: { status: number; headers: Record<string, string> } | undefined;
    try {
      streams.respond("acme", source, String, new AbortController().signal);
    } catch (error) {
      refused = error as typeof refused;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers["Retry-After"]).toMatch(/^\d+$/);
    expect(() => streams.respond("globex", source, String, new AbortController().signal)).not.toThrow();
    clients[0].abort();
    await responses[0].body!.cancel();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(streams.count("acme")).toBe(1);
  });
});
