import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { jobKeys } from "@/lib/jobs/keys";
import { replayDeltas } from "@/lib/jobs/replay-deltas";
import { StreamHub } from "@/lib/stream/stream-hub";
import type { StreamMessage } from "@/lib/jobs/stream-message";
import type { Redis } from "@/lib/redis";

const d = (seq: number, delta: string, is_final = false): StreamMessage => ({ seq, delta, is_final });

/** A ready subscriber connection that accepts SUBSCRIBE/UNSUBSCRIBE; tests emit its messages. */
class FakeSubscriber extends EventEmitter {
  status = "ready";
  async subscribe() {}
  async unsubscribe() {}
}

function setup(stored: StreamMessage[]) {
  const subscriber = new FakeSubscriber();
  const hub = new StreamHub(subscriber as unknown as Redis);
  const redis = { lrange: async () => stored.map((m) => JSON.stringify(m)) } as unknown as Redis;
  const publish = (jobId: string, ...messages: StreamMessage[]) => {
    for (const m of messages) subscriber.emit("message", jobKeys.stream(jobId), JSON.stringify(m));
  };
  return { hub, redis, publish };
}

describe("replayDeltas hands a client its messages in batches", () => {
  it("stored messages first, then what arrived together as one batch, without duplicates, up to the final one", async () => {
    const { hub, redis, publish } = setup([d(1, "a"), d(2, "b")]);
    const stream = replayDeltas({ redis, hub }, "j", 0, new AbortController().signal);
    const batches: number[][] = [];
    const first = await stream.next();
    batches.push((first.value as StreamMessage[]).map((m) => m.seq));
    const next = stream.next();
    publish("j", d(2, "b"), d(3, "c"), d(4, "d"), d(5, "", true), d(6, "after the end"));
    batches.push(((await next).value as StreamMessage[]).map((m) => m.seq));
    expect(batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    expect((await stream.next()).done).toBe(true);
    expect(hub.channelCount).toBe(0);
  });

  it("ends when the client goes away and releases the channel", async () => {
    const { hub, redis } = setup([]);
    const abort = new AbortController();
    const stream = replayDeltas({ redis, hub }, "j", 0, abort.signal);
    const next = stream.next();
    await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    expect((await next).done).toBe(true);
    expect(hub.channelCount).toBe(0);
  });
});
