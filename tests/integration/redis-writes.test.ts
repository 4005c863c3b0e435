import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRedis, type Redis } from "@/lib/redis";

/** The socket writes a connection makes, counted below Node's stream (one per system call's worth of data). */
function countWrites(redis: Redis): { count: number } {
  const socket = (redis as unknown as { stream: Socket }).stream as Socket & {
    _write: (...args: unknown[]) => void;
    _writev: (...args: unknown[]) => void;
  };
  const counter = { count: 0 };
  const write = socket._write;
  const writev = socket._writev;
  socket._write = function (...args) {
    counter.count++;
    return write.apply(this, args);
  };
  socket._writev = function (...args) {
    counter.count++;
    return writev.apply(this, args);
  };
  return counter;
}

let redis: Redis;
beforeAll(async () => {
  redis = createRedis(inject("redisUrl"));
  await redis.ping();
});
afterAll(async () => {
  await redis.quit();
});

describe("a Redis connection's writes", () => {
  it("sends the commands called in one turn of the event loop in one write, each with its own reply", async () => {
    const key = `test:writes:${randomUUID()}`;
    const writes = countWrites(redis);
    const replies = await Promise.all([redis.set(key, "1"), redis.incr(key), redis.incr(key), redis.get(key)]);
    expect(replies).toEqual(["OK", 2, 3, "3"]);
    expect(writes.count).toBe(1);

    // Commands of later turns are not held back: each awaited command is a write of its own.
    expect(await redis.incr(key)).toBe(4);
    expect(await redis.incr(key)).toBe(5);
    expect(writes.count).toBe(3);

    // A command called from a promise's continuation joins its turn's write.
    const chained = await Promise.resolve().then(() => Promise.all([redis.incr(key), redis.del(key)]));
    expect(chained).toEqual([6, 1]);
    expect(writes.count).toBe(4);
  });

  it("does the same on the socket of a reconnection", async () => {
    const ready = new Promise((resolve) => redis.once("ready", resolve));
    redis.disconnect(true);
    await ready;
    const writes = countWrites(redis);
    const key = `test:writes:${randomUUID()}`;
    expect(await Promise.all([redis.incr(key), redis.incr(key), redis.del(key)])).toEqual([1, 2, 1]);
    expect(writes.count).toBe(1);
  });
});
