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
    for (const delta of ["a", "b", "c"]) await writer.delta(delta);
    expect(seqs(await list(id))).toEqual([1, 2, 3]);
    await waitFor(async () => received.get(jobKeys.stream(id))!.length === 3, { what: "three published messages" });
    expect(received.get(jobKeys.stream(id))).toEqual(await list(id));
    close();
  });

  it("gives an event list the open-job expiry when it creates it, and never lengthens a shorter one", async () => {
    const [fresh, finished] = [newJobId(), newJobId()];
    const writers = await Promise.all([fresh, finished].map((id) => StreamWriter.open(redis(), id)));
    await writers[0]!.delta("a");
    const ttl = await redis().ttl(jobKeys.events(fresh));
    expect(ttl).toBeGreaterThan(OPEN_JOB_TTL_S - 60);
    expect(ttl).toBeLessThanOrEqual(OPEN_JOB_TTL_S);
    // A list with a day left (a final write's expiry): a late message keeps that day.
    await redis().multi().rpush(jobKeys.events(finished), "{}").expire(jobKeys.events(finished), 86_400).exec();
    await writers[1]!.delta("late");
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
    await Promise.all(writers.map((w) => w.delta("x")));
    await Promise.all(writers.flatMap((w) => [w.delta("y"), w.delta("z")]));
    const calls = await commandCalls();
    // Two turns, two scripts (the first may go as EVAL, loading it); inside them one RPUSH and one PUBLISH per message.
    expect((calls.evalsha ?? 0) + (calls.eval ?? 0)).toBe(2);
    expect([calls.rpush, calls.publish, calls.multi]).toEqual([9, 9, undefined]);
    for (const id of ids) expect(seqs(await list(id))).toEqual([1, 2, 3]);
  });

  it("fails the write of every stream in a batch that Redis refused", async () => {
    const [id, broken] = [newJobId(), newJobId()];
    await redis().set(jobKeys.events(broken), "not a list");
    const writers = await Promise.all([broken, id].map((job) => StreamWriter.continueAfter(redis(), job, 0)));
    const results = await Promise.allSettled(writers.map((w) => w.delta("x")));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
