import { describe, expect, it } from "vitest";
import type { Redis } from "@/lib/redis";
import { jobKeys, OPEN_JOB_TTL_S } from "@/lib/jobs/keys";
import { StreamWriter } from "@/lib/jobs/stream-writer";
import { realRedisPerFile } from "./real-redis";
import { waitFor } from "../helpers";

const redis = realRedisPerFile();
let jobs = 0;
const newJobId = () => `writer-job-${++jobs}`;

const seqs = (raw: string[]) => raw.map((r) => (JSON.parse(r) as { seq: number }).seq);
const list = (id: string) => redis().lrange(jobKeys.events(id), 0, -1);

/** Calls of each command since `reset`, from Redis's own counts (those inside scripts included). */
async function commandCalls(): Promise<Record<string, number>> {
  const info = await redis().info("commandstats");
  const calls: Record<string, number> = {};
  for (const [, name, n] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[name] = Number(n);
  return calls;
}
const resetCommandCalls = () => redis().config("RESETSTAT");

/** Subscribes to the streams of `ids` and collects what each receives. */
async function subscribe(ids: string[]): Promise<{ received: Map<string, string[]>; close: () => void }> {
  const subscriber: Redis = redis().duplicate();
  const received = new Map<string, string[]>(ids.map((id) => [jobKeys.stream(id), []]));
  subscriber.on("message", (channel: string, raw: string) => received.get(channel)?.push(raw));
  await subscriber.subscribe(...ids.map((id) => jobKeys.stream(id)));
  return { received, close: () => subscriber.disconnect() };
}

describe("StreamWriter", () => {
  it("appends every message to the replay list and publishes it, in seq order", async () => {
    const id = newJobId();
    const { received, close } = await subscribe([id]);
    const writer = await StreamWriter.open(redis(), id);
    // Each delta written before the next is given: one message each.
    for (const delta of ["a", "b", "c"]) {
      await writer.delta(delta);
      await writer.flush();
    }
    expect(seqs(await list(id))).toEqual([1, 2, 3]);
    await waitFor(async () => received.get(jobKeys.stream(id))!.length === 3, { what: "three published messages" });
    expect(received.get(jobKeys.stream(id))).toEqual(await list(id));
    close();
  });

  it("gives an event list the open-job expiry when it creates it, and never lengthens a shorter one", async () => {
    const [fresh, finished] = [newJobId(), newJobId()];
    const writers = await Promise.all([fresh, finished].map((id) => StreamWriter.open(redis(), id)));
    await writers[0]!.delta("a");
    await writers[0]!.flush();
    const ttl = await redis().ttl(jobKeys.events(fresh));
    expect(ttl).toBeGreaterThan(OPEN_JOB_TTL_S - 60);
    expect(ttl).toBeLessThanOrEqual(OPEN_JOB_TTL_S);
    // A list with a day left (a final write's expiry): a late message keeps that day.
    await redis().multi().rpush(jobKeys.events(finished), "{}").expire(jobKeys.events(finished), 86_400).exec();
    await writers[1]!.delta("late");
    await writers[1]!.flush();
    expect(await redis().ttl(jobKeys.events(finished))).toBeLessThanOrEqual(86_400);
  });

  it("continues after what an earlier attempt wrote", async () => {
    const id = newJobId();
    await redis().rpush(jobKeys.events(id), "{}", "{}");
    const writer = await StreamWriter.open(redis(), id);
    await writer.reset(2);
    expect(writer.written).toBe(3);
    expect(JSON.parse((await list(id))[2]!)).toEqual({ seq: 3, delta: "", is_final: false, reset: true, attempt: 2 });
  });

  it("sends the messages of streams written in the same turn as one command, each stream's in order", async () => {
    const ids = [newJobId(), newJobId(), newJobId()];
    const writers = await Promise.all(ids.map((id) => StreamWriter.open(redis(), id)));
    await resetCommandCalls();
    for (const w of writers) void w.delta("x");
    await Promise.all(writers.map((w) => w.flush()));
    for (const w of writers) void w.delta("y");
    await Promise.all(writers.map((w) => w.flush()));
    const calls = await commandCalls();
    // Two turns, two scripts (the first may go as EVAL, loading it); inside them one RPUSH and one PUBLISH per message.
    expect((calls.evalsha ?? 0) + (calls.eval ?? 0)).toBe(2);
    expect([calls.rpush, calls.publish, calls.multi]).toEqual([6, 6, undefined]);
    for (const id of ids) expect(seqs(await list(id))).toEqual([1, 2]);
  });

  it("holds what a stream is given while its message is written and sends it as one message next", async () => {
    const [id, other] = [newJobId(), newJobId()];
    const writers = await Promise.all([id, other].map((job) => StreamWriter.open(redis(), job)));
    await resetCommandCalls();
    // "a" goes at once; "b", "c" and "d" arrive while it is on its way (the other stream's too).
    for (const delta of ["a", "b", "c", "d"]) for (const w of writers) void w.delta(delta);
    await Promise.all(writers.map((w) => w.flush()));
    for (const job of [id, other]) {
      expect((await list(job)).map((raw) => JSON.parse(raw))).toEqual([
        { seq: 1, delta: "a", is_final: false },
        { seq: 2, delta: "bcd", deltas: 3, is_final: false },
      ]);
    }
    const calls = await commandCalls();
    // Two scripts for both streams: the held text of each goes in the second.
    expect((calls.evalsha ?? 0) + (calls.eval ?? 0)).toBe(2);
    expect([calls.rpush, calls.publish]).toEqual([4, 4]);
    // The final message comes after them, numbered next.
    expect(JSON.parse(writers[0]!.final("COMPLETED", "length")[0]![2] as string)).toMatchObject({
      seq: 3,
      is_final: true,
    });
  });

  it("puts the text held when the run ends in the final write, before the final message, not in a message of its own", async () => {
    const id = newJobId();
    const writer = await StreamWriter.open(redis(), id);
    await resetCommandCalls();
    // "a" goes at once; "b" and "c" arrive while it is on its way, then the run has its last delta.
    for (const delta of ["a", "b", "c"]) void writer.delta(delta);
    await writer.end();
    expect(seqs(await list(id))).toEqual([1]);
    const calls = await commandCalls();
    expect((calls.evalsha ?? 0) + (calls.eval ?? 0)).toBe(1);
    const commands = writer.final("COMPLETED", "stop");
    expect(commands.map(([name]) => name)).toEqual(["RPUSH", "PUBLISH", "RPUSH", "PUBLISH"]);
    const { received, close } = await subscribe([id]);
    try {
      await redis()
        .multi(commands.map(([name, ...args]) => [name.toLowerCase(), ...args.map(String)]))
        .exec();
      const stored = (await list(id)).map((raw) => JSON.parse(raw));
      expect(stored).toEqual([
        { seq: 1, delta: "a", is_final: false },
        { seq: 2, delta: "bc", deltas: 2, is_final: false },
        expect.objectContaining({ seq: 3, is_final: true }),
      ]);
      await waitFor(() => received.get(jobKeys.stream(id))!.length === 2, { what: "the two messages published" });
      expect(seqs(received.get(jobKeys.stream(id))!)).toEqual([2, 3]);
    } finally {
      close();
    }
  });

  it("lets the event loop turn before a delta resolves, so an unpaced model cannot starve timers", async () => {
    const writer = await StreamWriter.open(redis(), newJobId());
    let turned = false;
    setImmediate(() => (turned = true));
    await writer.delta("a");
    expect(turned).toBe(true);
    await writer.flush();
  });

  it("refuses the final message while deltas are still on their way, and drops held text when abandoned", async () => {
    const id = newJobId();
    const writer = await StreamWriter.open(redis(), id);
    void writer.delta("a");
    void writer.delta("b");
    expect(() => writer.final("COMPLETED", "stop")).toThrow(/still being written/);
    writer.abandon();
    await writer.idle();
    expect(seqs(await list(id))).toEqual([1]);
    expect(writer.final("CANCELLED", "cancelled")).toHaveLength(2);
  });

  it("fails the write of every stream in a batch that Redis refused, and the stream's later deltas until a reset", async () => {
    const [id, broken] = [newJobId(), newJobId()];
    await redis().set(jobKeys.events(broken), "not a list");
    const writers = await Promise.all([broken, id].map((job) => StreamWriter.continueAfter(redis(), job, 0)));
    const results = await Promise.allSettled(writers.map((w) => w.delta("x").then(() => w.flush())));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await expect(writers[1]!.delta("y")).rejects.toThrow();
    // A new attempt starts over: its reset and what follows are written.
    await writers[1]!.reset(2);
    await writers[1]!.delta("z");
    await writers[1]!.flush();
    expect((await list(id)).map((raw) => JSON.parse(raw) as { seq: number; delta: string })).toMatchObject([
      { seq: 2, reset: true },
      { seq: 3, delta: "z" },
    ]);
  });
});
