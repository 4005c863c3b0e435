import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { Redis } from "@/lib/redis";
import { StreamHub } from "@/lib/stream/stream-hub";

/** An ioredis subscriber connection as the hub sees it: a status, SUBSCRIBE/UNSUBSCRIBE, and events. */
class FakeSubscriber extends EventEmitter {
  sent: string[] = [];
  constructor(public status: string) {
    super();
  }
  async subscribe(channel: string) {
    this.sent.push(`subscribe ${channel}`);
  }
  async unsubscribe(channel: string) {
    this.sent.push(`unsubscribe ${channel}`);
  }
  becomeReady() {
    this.status = "ready";
    this.emit("ready");
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("StreamHub", () => {
  it("subscribes only once the connection is ready (ioredis's ready check fails on a connection already subscribed)", async () => {
    const subscriber = new FakeSubscriber("connect");
    const hub = new StreamHub(subscriber as unknown as Redis);
    const subscriptions = ["a", "b", "c"].map((channel) => hub.subscribe(channel, () => {}));
    await tick();
    expect(subscriber.sent).toEqual([]);
    subscriber.becomeReady();
    await Promise.all(subscriptions);
    expect(subscriber.sent).toEqual(["subscribe a", "subscribe b", "subscribe c"]);
  });

  it("shares one subscription per channel and releases it with the last listener", async () => {
    const subscriber = new FakeSubscriber("ready");
    const hub = new StreamHub(subscriber as unknown as Redis);
    const got: string[] = [];
    const first = await hub.subscribe("a", (raw) => got.push(`1:${raw}`));
    const second = await hub.subscribe("a", (raw) => got.push(`2:${raw}`));
    subscriber.emit("message", "a", "m");
    expect(got).toEqual(["1:m", "2:m"]);
    await first();
    expect(subscriber.sent).toEqual(["subscribe a"]);
    await second();
    expect(subscriber.sent).toEqual(["subscribe a", "unsubscribe a"]);
    expect(hub.channelCount).toBe(0);
  });

  it("tells listeners to read their list again after a reconnection", async () => {
    const subscriber = new FakeSubscriber("ready");
    const hub = new StreamHub(subscriber as unknown as Redis);
    let resyncs = 0;
    await hub.subscribe("a", { message: () => {}, resync: () => resyncs++ });
    subscriber.emit("close");
    subscriber.becomeReady();
    expect(resyncs).toBe(1);
  });

  it("parses a message once for all the listeners of its channel and drops what does not parse", async () => {
    const subscriber = new FakeSubscriber("ready");
    const hub = new StreamHub(subscriber as unknown as Redis);
    let parses = 0;
    const parse = (raw: string) => (parses++, raw === "bad" ? undefined : { raw });
    const got: unknown[] = [];
    await hub.subscribe("a", (m) => got.push(m), parse);
    await hub.subscribe("a", (m) => got.push(m), parse);
    subscriber.emit("message", "a", "m");
    subscriber.emit("message", "a", "bad");
    expect(parses).toBe(2);
    expect(got).toEqual([{ raw: "m" }, { raw: "m" }]);
    expect(got[0]).toBe(got[1]);
  });
});
