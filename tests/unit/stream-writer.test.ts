import { describe, expect, it } from "vitest";
import type { Redis } from "@/lib/redis";
import { jobKeys, OPEN_JOB_TTL_S } from "@/lib/jobs/keys";
import { StreamWriter } from "@/lib/jobs/stream-writer";

/** Just enough of ioredis for StreamWriter: LLEN, and MULTI with RPUSH/PUBLISH/EXPIRE, recording each EXEC. */
function fakeRedis(options: { failExec?: boolean } = {}) {
  const execs: string[][][] = [];
  const lists = new Map<string, string[]>();
  const published: [string, string][] = [];
  const redis = {
    llen: async (key: string) => lists.get(key)?.length ?? 0,
    multi() {
      const commands: string[][] = [];
      const multi = {
        rpush: (key: string, ...values: string[]) => (commands.push(["rpush", key, ...values]), multi),
        publish: (channel: string, message: string) => (commands.push(["publish", channel, message]), multi),
        expire: (key: string, ttl: number, mode: string) => (commands.push(["expire", key, String(ttl), mode]), multi),
        async exec() {
          if (options.failExec) throw new Error("Connection is closed.");
          execs.push(commands);
          for (const [name, key, ...values] of commands) {
            if (name === "rpush") lists.set(key, [...(lists.get(key) ?? []), ...values]);
            else if (name === "publish") published.push([key, values[0]]);
          }
          return commands.map(() => [null, 1]);
        },
      };
      return multi;
    },
  };
  return { redis: redis as unknown as Redis, execs, lists, published };
}

const seqs = (raw: string[] = []) => raw.map((r) => (JSON.parse(r) as { seq: number }).seq);

describe("StreamWriter", () => {
  it("appends every message to the replay list and publishes it, in seq order", async () => {
    const { redis, lists, published } = fakeRedis();
    const writer = await StreamWriter.open(redis, "job-1");
    for (const delta of ["a", "b", "c"]) await writer.delta(delta);
    expect(seqs(lists.get(jobKeys.events("job-1")))).toEqual([1, 2, 3]);
    expect(published.map(([channel]) => channel)).toEqual(Array(3).fill(jobKeys.stream("job-1")));
    expect(published.map(([, raw]) => raw)).toEqual(lists.get(jobKeys.events("job-1")));
  });

  it("gives each stream's event list the open-job expiry, once per batch", async () => {
    const { redis, execs } = fakeRedis();
    const writers = await Promise.all(["job-1", "job-2"].map((id) => StreamWriter.open(redis, id)));
    await Promise.all([writers[0]!.delta("a"), writers[0]!.delta("b"), writers[1]!.delta("c")]);
    expect(execs[0]?.filter(([name]) => name === "expire")).toEqual([
      ["expire", jobKeys.events("job-1"), String(OPEN_JOB_TTL_S), "NX"],
      ["expire", jobKeys.events("job-2"), String(OPEN_JOB_TTL_S), "NX"],
    ]);
  });

  it("continues after what an earlier attempt wrote", async () => {
    const { redis, lists } = fakeRedis();
    lists.set(jobKeys.events("job-1"), ["{}", "{}"]);
    const writer = await StreamWriter.open(redis, "job-1");
    await writer.reset(2);
    expect(writer.written).toBe(3);
    expect(JSON.parse(lists.get(jobKeys.events("job-1"))![2])).toEqual({
      seq: 3,
      delta: "",
      is_final: false,
      reset: true,
      attempt: 2,
    });
  });

  it("sends the deltas of streams written in the same turn as one MULTI, each stream's in order", async () => {
    const { redis, execs, lists } = fakeRedis();
    const writers = await Promise.all(["job-1", "job-2", "job-3"].map((id) => StreamWriter.open(redis, id)));
    await Promise.all(writers.map((w) => w.delta("x")));
    await Promise.all(writers.map((w) => w.delta("y")));
    expect(execs).toHaveLength(2);
    expect(execs[0]?.filter(([name]) => name !== "expire")).toHaveLength(6);
    for (const id of ["job-1", "job-2", "job-3"]) expect(seqs(lists.get(jobKeys.events(id)))).toEqual([1, 2]);
  });

  it("fails the write of every stream in a batch that Redis refused", async () => {
    const { redis } = fakeRedis({ failExec: true });
    const writers = await Promise.all(["job-1", "job-2"].map((id) => StreamWriter.open(redis, id)));
    const results = await Promise.allSettled(writers.map((w) => w.delta("x")));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
