import { randomUUID } from "node:crypto";
import type { Consumer, EachBatchPayload, KafkaMessage } from "kafkajs";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { FairQueue } from "@/lib/consume/fair-queue";
import { KeySlots, slotsKey } from "@/lib/consume/key-slots";
import { PartitionWindow } from "@/lib/consume/partition-window";
import { ParallelRunner } from "@/lib/consume/parallel-runner";
import { waitFor } from "../helpers";
import { keepLease, runUnderLease, takeLease, writeIfLeaseHeld } from "@/lib/lease";
import { realRedisPerFile } from "./real-redis";

const message = (offset: number, key = "t"): KafkaMessage =>
  ({
    offset: String(offset),
    key: Buffer.from(key),
    value: Buffer.from("{}"),
    timestamp: "0",
    attributes: 0,
    headers: {},
  }) as KafkaMessage;
const keyOf = (m: KafkaMessage) => m.key!.toString();

describe("PartitionWindow", () => {
  it("commits only up to the lowest unsettled offset, whatever finishes first", () => {
    const window = new PartitionWindow("topic", 0);
    const entries = window.add(
      [10, 11, 12, 13].map((o) => message(o)),
      keyOf,
    );
    expect(window.watermark).toBe(10n);
    window.settle(entries[2]);
    window.settle(entries[1]);
    expect(window.watermark).toBe(10n);
    expect(window.size).toBe(2);
    window.settle(entries[0]);
    expect(window.watermark).toBe(13n);
    window.settle(entries[3]);
    expect(window.watermark).toBe(14n);
    expect(window.size).toBe(0);
  });

  it("drops redeliveries of offsets it has seen, and never asks to commit backwards", () => {
    const window = new PartitionWindow("topic", 0);
    const [first] = window.add([message(0), message(1)], keyOf);
    expect(window.add([message(0), message(1), message(2)], keyOf).map((e) => e.offset)).toEqual([2n]);
    window.settle(first);
    expect(window.commitDue()).toBe(1n);
    window.committedUpTo(1n);
    expect(window.commitDue()).toBeUndefined();
    window.committedUpTo(0n);
    expect(window.lastCommitted).toBe(1n);
  });

  it("keeps no message payload once settled", () => {
    const window = new PartitionWindow("topic", 0);
    const entries = window.add([message(0), message(1)], keyOf);
    window.settle(entries[1]);
    expect(entries[1].message).toBeUndefined();
    expect(entries[0].message).toBeDefined();
  });
});

describe("FairQueue", () => {
  const item = (key: string, n: number) => ({ key, n });

  it("takes one key at a time in turn, each key in the order its items came", () => {
    const queue = new FairQueue<{ key: string; n: number }>();
    for (let n = 0; n < 5; n++) queue.push(item("flood", n));
    queue.push(item("lone", 0));
    queue.push(item("other", 0));
    queue.push(item("other", 1));
    const order = [];
    for (let item = queue.take(() => true); item; item = queue.take(() => true)) order.push(`${item.key}${item.n}`);
    expect(order).toEqual(["flood0", "lone0", "other0", "flood1", "other1", "flood2", "flood3", "flood4"]);
  });

  it("skips keys that may not start now without blocking the others, and keeps a put-back item first", () => {
    const queue = new FairQueue<{ key: string; n: number }>();
    queue.push(item("capped", 0));
    queue.push(item("capped", 1));
    queue.push(item("free", 0));
    expect(queue.take((key) => key !== "capped")).toEqual(item("free", 0));
    expect(queue.take((key) => key !== "capped")).toBeUndefined();
    const head = queue.take(() => true)!;
    queue.unshift(head);
    expect(queue.take(() => true)).toEqual(item("capped", 0));
    expect(queue.size).toBe(1);
  });

  it("removes what a revoked partition left waiting", () => {
    const queue = new FairQueue<{ key: string; n: number }>();
    for (let n = 0; n < 4; n++) queue.push(item(n % 2 ? "a" : "b", n));
    expect(queue.remove((i) => i.n < 3).map((i) => i.n)).toEqual([0, 2, 1]);
    expect(queue.size).toBe(1);
    expect([...queue.waiting()]).toEqual([["a", 1]]);
  });
});

describe("on a real Redis", () => {
  const redis = realRedisPerFile();

  /** A run of `owner` under the lease at `key`, 10 s long, with no group to heartbeat. */
  const leaseRun = (key: string, owner: string, shutdown = new AbortController().signal) => ({
    redis: redis(),
    key,
    owner,
    ms: 10_000,
    heartbeat: async () => {},
    shutdown,
  });

  it("KeySlots: at most `limit` running per key across processes, freed on release and when a holder stops renewing", async () => {
    const group = `g-${randomUUID()}`;
    const a = new KeySlots(redis(), group, 2, 300);
    const b = new KeySlots(redis(), group, 2, 300);
    expect(await a.acquire("tenant", "a1")).toBe(true);
    expect(await b.acquire("tenant", "b1")).toBe(true);
    expect(await b.acquire("tenant", "b2")).toBe(false);
    expect(await b.acquire("another", "b3")).toBe(true);
    await a.release("a1");
    expect(await b.acquire("tenant", "b2")).toBe(true);
    expect(await a.count("tenant")).toBe(2);
    // b renews, a's would-be slot is gone: b's slots outlive their ttl only while renewed.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 150));
      await b.renew();
    }
    expect(await a.count("tenant")).toBe(2);
    await new Promise((r) => setTimeout(r, 400));
    expect(await a.count("tenant")).toBe(0);
    expect(await redis().exists(slotsKey(group, "tenant"))).toBe(0);
  });

  it("KeySlots.acquireAll: several slots in one script, in order; a full key refuses its later slots of the call too", async () => {
    const group = `g-${randomUUID()}`;
    const slots = new KeySlots(redis(), group, 2, 10_000);
    expect(await slots.acquire("a", "held")).toBe(true);
    await redis().config("RESETSTAT");
    const wanted = ["a:held", "a:a1", "b:b1", "a:a2", "b:b2", "b:b3"].map((w) => {
      const [key, slot] = w.split(":");
      return { key, slot };
    });
    // "held" is this run's already (taken again, not counted twice); a has one slot left, b two.
    expect(await slots.acquireAll(wanted)).toEqual([true, true, true, false, true, false]);
    expect((await redis().info("commandstats")).match(/^cmdstat_evalsha:calls=(\d+)/m)?.[1]).toBe("1");
    expect((await redis().zrange(slotsKey(group, "a"), 0, -1)).sort()).toEqual(["a1", "held"]);
    expect((await redis().zrange(slotsKey(group, "b"), 0, -1)).sort()).toEqual(["b1", "b2"]);
    // What was taken is released as usual; what was refused was never held.
    await slots.release("a1");
    await slots.release("a2");
    expect(await slots.count("a")).toBe(1);
    expect(await new KeySlots(redis(), group, Infinity).acquireAll(wanted)).toEqual(wanted.map(() => true));
  });

  it("ParallelRunner fills its free slots in one round trip under a backlog, each key's messages in order and within its cap", async () => {
    const group = `g-${randomUUID()}`;
    const acquired: number[] = [];
    class CountingSlots extends KeySlots {
      override acquireAll(wanted: { key: string; slot: string }[]) {
        acquired.push(wanted.length);
        return super.acquireAll(wanted);
      }
    }
    const started: string[] = [];
    const finish: (() => void)[] = [];
    const consumer = { commitOffsets: async () => {}, pause: () => {} } as unknown as Consumer;
    const runner = new ParallelRunner<unknown>(
      consumer,
      { log: () => {}, workerId: "w" },
      {
        name: "test",
        groupId: group,
        topic: "topic",
        concurrency: 6,
        maxBuffered: 100,
        perKeyLimit: 2,
        schema: z.unknown(),
        onInvalid: async () => {},
        work: (_payload, m) =>
          new Promise((resolve) => {
            started.push(`${m.key}${m.offset}`);
            finish.push(() => resolve("settled"));
          }),
      },
      new CountingSlots(redis(), group, 2),
    );
    try {
      const keys = ["a", "a", "a", "a", "a", "b"];
      await runner.takeBatch({
        batch: { topic: "topic", partition: 0, highWatermark: "6", messages: keys.map((k, o) => message(o, k)) },
        resolveOffset: () => {},
        heartbeat: async () => {},
        pause: () => () => {},
      } as unknown as EachBatchPayload);
      await waitFor(() => started.length === 3);
      // Six free slots: six messages taken a key at a time and their slots asked for in one call;
      // a's cap of two refuses its third to fifth, which go back to wait in their order.
      expect(acquired[0]).toBe(6);
      expect(started).toEqual(["a0", "b5", "a1"]);
      expect(runner.stats().keys.find((k) => k.key === "a")).toEqual({ key: "a", running: 2, waiting: 3 });
      // One of a's finishes: a's next message, and only it, starts.
      finish.shift()!();
      await waitFor(() => started.length === 4);
      expect(started[3]).toBe("a2");
      expect(runner.stats().keys.find((k) => k.key === "a")).toEqual({ key: "a", running: 2, waiting: 2 });
    } finally {
      for (const f of finish) f();
      await runner.stop(0);
    }
  });

  it("KeySlots.renew: renews every slot held, with one ZADD and one PEXPIRE per key (and per 1,000 slots of a key)", async () => {
    const group = `g-${randomUUID()}`;
    const slots = new KeySlots(redis(), group, 5_000, 60_000);
    const many = Array.from({ length: 2_500 }, (_, n) => `run-${n}`);
    for (const slot of many) expect(await slots.acquire("big", slot)).toBe(true);
    expect(await slots.acquire("small", "run-x")).toBe(true);
    await redis().zadd(slotsKey(group, "big"), 0, "run-0"); // as good as lapsed, until renewed
    await redis().pexpire(slotsKey(group, "small"), 1_000);
    await redis().config("RESETSTAT");
    await slots.renew();
    const calls = (await redis().info("commandstats"))
      .split("\n")
      .filter((line) => /^cmdstat_(zadd|pexpire):/.test(line))
      .map((line) => line.replace(/^cmdstat_(\w+):calls=(\d+).*$/s, "$1 $2").trim())
      .sort();
    expect(calls).toEqual(["pexpire 2", "zadd 4"]);
    const scores = await redis().zrange(slotsKey(group, "big"), 0, -1, "WITHSCORES");
    const lapseAt = scores.filter((_, i) => i % 2 === 1).map(Number);
    expect(lapseAt).toHaveLength(2_500);
    expect(Math.min(...lapseAt)).toBeGreaterThan(Date.now() + 30_000);
    expect(await redis().pttl(slotsKey(group, "small"))).toBeGreaterThan(30_000);
    expect(await redis().zrange(slotsKey(group, "small"), 0, -1)).toEqual(["run-x"]);
  });

  it("KeySlots.handOver: the slot is freed by the command it returns, and this process no longer renews or releases it", async () => {
    const group = `g-${randomUUID()}`;
    const slots = new KeySlots(redis(), group, 1, 10_000);
    expect(await slots.acquire("tenant", "run-1")).toBe(true);
    const commands = slots.handOver("run-1");
    expect(commands).toEqual([["ZREM", slotsKey(group, "tenant"), "run-1"]]);
    expect(slots.handOver("run-1")).toEqual([]);
    await slots.release("run-1");
    // Still held until the work's write runs the command.
    expect(await slots.acquire("tenant", "run-2")).toBe(false);
    for (const [name, ...args] of commands) await redis().call(name, ...args);
    expect(await slots.acquire("tenant", "run-2")).toBe(true);
    expect(await redis().zrange(slotsKey(group, "tenant"), 0, -1)).toEqual(["run-2"]);
  });

  it("KeySlots without a limit: every acquire succeeds and nothing is kept in Redis", async () => {
    const group = `g-${randomUUID()}`;
    const slots = new KeySlots(redis(), group, Infinity, 300);
    for (let n = 0; n < 50; n++) expect(await slots.acquire("tenant", `run-${n}`)).toBe(true);
    await slots.renew();
    await slots.release("run-0");
    expect(await redis().exists(slotsKey(group, "tenant"))).toBe(0);
  });

  it("runs scripts by their SHA1, and by their text once when Redis has forgotten them", async () => {
    const key = `lease-${randomUUID()}`;
    expect(await takeLease(redis(), key, "run-1", 10_000)).toBe("");
    await redis().script("FLUSH");
    await redis().config("RESETSTAT");
    for (let n = 2; n <= 6; n++) expect(await takeLease(redis(), key, `run-${n}`, 10_000)).toBe("run-1");
    const stats = await redis().info("commandstats");
    const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    // The text went once, after the first EVALSHA was refused with NOSCRIPT; the other four by SHA1.
    expect(calls("eval")).toBe(1);
    expect(calls("evalsha")).toBeGreaterThanOrEqual(4);
  });

  it("writeIfLeaseHeld writes for the holder (or a lapsed lease) and nothing for a run that lost it", async () => {
    const key = `lease-${randomUUID()}`;
    const target = `target-${randomUUID()}`;
    expect(await writeIfLeaseHeld(redis(), key, "run-1", [["HSET", target, "by", "run-1"]])).toBe(true);
    expect(await takeLease(redis(), key, "run-2", 10_000)).toBe("");
    expect(
      await writeIfLeaseHeld(redis(), key, "run-1", [
        ["HSET", target, "by", "run-1-late"],
        ["EXPIRE", target, 60],
      ]),
    ).toBe(false);
    expect(await redis().hget(target, "by")).toBe("run-1");
    expect(await redis().ttl(target)).toBe(-1);
    expect(await writeIfLeaseHeld(redis(), key, "run-2", [["HSET", target, "by", "run-2"]])).toBe(true);
    expect(await redis().hget(target, "by")).toBe("run-2");
  });

  it("a run gives its lease up with its last write in one step; the write lands even if the lease is another run's now", async () => {
    const key = `lease-${randomUUID()}`;
    const target = `target-${randomUUID()}`;
    const hooks = { heartbeat: async () => {}, onLost: () => {} };
    expect(await takeLease(redis(), key, "run-1", 10_000)).toBe("");
    await keepLease(redis(), key, "run-1", 10_000, hooks).release([["HSET", target, "audited", "1"]]);
    expect(await redis().hget(target, "audited")).toBe("1");
    expect(await redis().exists(key)).toBe(0);

    // run-1's lease lapsed and run-2 took it: run-1's mark is still written, run-2's lease stays.
    expect(await takeLease(redis(), key, "run-2", 10_000)).toBe("");
    const late = keepLease(redis(), key, "run-1", 10_000, hooks);
    await late.release([["HSET", target, "late", "1"]]);
    expect(await redis().hget(target, "late")).toBe("1");
    expect(await redis().get(key)).toBe("run-2");
    // Released once: a second release (runUnderLease's own, at the end) does nothing.
    await late.release([["HSET", target, "again", "1"]]);
    expect(await redis().hget(target, "again")).toBeNull();
  });

  it("runUnderLease runs a claim that checks and takes in one step, waiting while another run holds the lease", async () => {
    const key = `lease-${randomUUID()}`;
    const claims: string[] = [];
    let holder: string | undefined = "first";
    const outcome = runUnderLease(
      leaseRun(key, "second"),
      {
        claim: async () => {
          claims.push(holder ?? "none");
          if (holder) return { heldBy: holder };
          return (await takeLease(redis(), key, "second", 10_000)) ? { heldBy: "?" } : "taken";
        },
        run: async () => ((await redis().get(key)) === "second" ? "ran holding it" : "ran without it"),
      },
      "handed-back",
    );
    await waitFor(async () => claims.length >= 1, { what: "the first claim" });
    holder = undefined;
    expect(await outcome).toBe("ran holding it");
    expect(claims[0]).toBe("first");
    expect(claims.at(-1)).toBe("none");
    expect(await redis().exists(key)).toBe(0);
  });

  it("runUnderLease waits for another live run, then checks again instead of running twice", async () => {
    const key = `lease-${randomUUID()}`;
    let done = false;
    expect(await takeLease(redis(), key, "first", 10_000)).toBe("");
    const second = runUnderLease(
      leaseRun(key, "second"),
      { check: async () => (done ? "skipped" : undefined), run: async () => "ran" },
      "handed-back",
    );
    await new Promise((r) => setTimeout(r, 300));
    done = true;
    await redis().del(key);
    expect(await second).toBe("skipped");
  });

  it("runUnderLease hands the work back when the worker stops mid-run", async () => {
    const shutdown = new AbortController();
    const outcome = runUnderLease(
      leaseRun(`lease-${randomUUID()}`, "run", shutdown.signal),
      {
        check: async () => undefined,
        run: (signal) =>
          new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
      },
      "handed-back",
    );
    setTimeout(() => shutdown.abort(), 50);
    expect(await outcome).toBe("handed-back");
  });
});
