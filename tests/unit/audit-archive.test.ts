import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAuditArchive, readAuditArchive, type AuditArchive } from "@/lib/jobs/audit-archive";

/** The audit archive on the real file system, in a directory of its own per test. */
let dir: string;
const archives: AuditArchive[] = [];
const DAY_1 = Date.parse("2026-11-25T23:59:59.900Z");
const DAY_2 = Date.parse("2026-11-26T00:00:00.100Z");

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "audit-archive-"));
});

afterEach(async () => {
  await Promise.all(archives.splice(0).map((a) => a.close().catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
});

function archive(at: () => number = () => DAY_1, writer = "worker-1", into = dir): AuditArchive {
  const created = createAuditArchive(into, writer, at);
  archives.push(created);
  return created;
}

const event = (i: number) => JSON.stringify({ job_id: `job-${i}`, output: `line ${i}\nwith a newline escaped` });
const linesOf = (file: string) => readFileSync(path.join(dir, file), "utf8").split("\n");

describe("the audit archive", () => {
  it("appends each event as one line of the writer's file for the day, in the order appended", async () => {
    const a = archive();
    await Promise.all([0, 1, 2].map((i) => a.append(event(i))));
    await a.append(event(3));
    expect(readdirSync(dir)).toEqual(["2026-11-25.worker-1.jsonl"]);
    expect(linesOf("2026-11-25.worker-1.jsonl")).toEqual([event(0), event(1), event(2), event(3), ""]);
  });

  it("writes the lines of one turn together: one clock reading, one file, even across midnight", async () => {
    // The clock says a new day from its second reading on: a write per line would split the turn.
    let readings = 0;
    const a = archive(() => (readings++ === 0 ? DAY_1 : DAY_2));
    await Promise.all([0, 1, 2, 3].map((i) => a.append(event(i))));
    expect(readings).toBe(1);
    expect(readdirSync(dir)).toEqual(["2026-11-25.worker-1.jsonl"]);
    // The next turn's write reads the clock again and goes to the new day's file.
    await a.append(event(4));
    expect(readdirSync(dir).sort()).toEqual(["2026-11-25.worker-1.jsonl", "2026-11-26.worker-1.jsonl"]);
    expect(linesOf("2026-11-26.worker-1.jsonl")).toEqual([event(4), ""]);
  });

  it("keeps the order of lines appended while a write is under way, many turns over", async () => {
    const a = archive();
    const written: Promise<void>[] = [];
    for (let i = 0; i < 500; i++) {
      written.push(a.append(event(i)));
      if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(written);
    expect(linesOf("2026-11-25.worker-1.jsonl")).toEqual([...Array.from({ length: 500 }, (_, i) => event(i)), ""]);
  });

  it("fails every append of a write that failed, and the next turn writes again", async () => {
    // The directory's place is taken by a file: making the directory fails, as a full or read-only disk would.
    const blocked = path.join(dir, "blocked");
    writeFileSync(blocked, "");
    const a = archive(undefined, "worker-1", blocked);
    const results = await Promise.allSettled([a.append(event(0)), a.append(event(1))]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({
      code: expect.stringMatching(/EEXIST|ENOTDIR/),
    });

    rmSync(blocked);
    await a.append(event(1));
    expect(readFileSync(path.join(blocked, "2026-11-25.worker-1.jsonl"), "utf8")).toBe(`${event(1)}\n`);
  });

  it("ends a line a crash cut short before it appends, so every event stays a line of its own", async () => {
    writeFileSync(path.join(dir, "2026-11-25.worker-1.jsonl"), `${event(0)}\n{"job_id":"job-1","out`);
    await archive().append(event(2));
    const read: string[] = [];
    expect(await readAuditArchive(dir, (line) => read.push(line))).toEqual({ files: 1, lines: 3 });
    expect(read).toEqual([event(0), '{"job_id":"job-1","out', event(2)]);
  });

  it("reads every writer's files, oldest day first, and nothing else in the directory", async () => {
    await archive(() => DAY_2, "worker-2").append(event(2));
    await archive(() => DAY_1, "worker/1").append(event(1));
    writeFileSync(path.join(dir, "notes.txt"), "not an archive\n");
    appendFileSync(path.join(dir, "2026-11-26.worker-2.jsonl"), "\n\n");
    const read: string[] = [];
    expect(await readAuditArchive(dir, (line) => read.push(line))).toEqual({ files: 2, lines: 2 });
    expect(read).toEqual([event(1), event(2)]);
    expect(readdirSync(dir).sort()).toContain("2026-11-25.worker_1.jsonl");
  });

  it("reads no line from a directory that does not exist", async () => {
    expect(await readAuditArchive(path.join(dir, "never-written"), () => expect.fail("no line"))).toEqual({
      files: 0,
      lines: 0,
    });
  });

  it("writes what was appended before it closes", async () => {
    const a = archive();
    const appended = a.append(event(0));
    await a.close();
    await appended;
    expect(linesOf("2026-11-25.worker-1.jsonl")).toEqual([event(0), ""]);
  });
});
