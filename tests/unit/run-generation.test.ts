import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Producer, ProducerRecord } from "kafkajs";
import { expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { createAuditArchive, readAuditArchive } from "@/lib/jobs/audit-archive";
import { jobKeys } from "@/lib/jobs/keys";
import { listModels } from "@/lib/jobs/list-models";
import { createProviders } from "@/lib/jobs/providers";
import type { GenerationChunk, Provider } from "@/lib/jobs/providers/provider";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { generationSteps, runGeneration, type GenerationDeps } from "@/lib/jobs/run-generation";
import { submitJob } from "@/lib/jobs/submit-job";
import { takeLease, type RedisCommand } from "@/lib/lease";
import { TOPICS } from "@/lib/topics";
import { usageField } from "@/lib/usage/usage-facts";
import { bucketStart, usageKeys } from "@/lib/usage/usage-keys";
import { waitFor } from "../helpers";
import { realRedisPerFile } from "./real-redis";
import { foldUsage } from "@/lib/usage/fold-usage";

/** runGeneration on a real Redis: one run per job whatever delivers it, final writes under the lease, DLQ and audit once. */
const sent: ProducerRecord[] = [];
const producer = { send: async (record: ProducerRecord) => void sent.push(record) } as unknown as Producer;
const config = parseConfig({
  REDIS_URL: "redis://127.0.0.1:1",
  KAFKA_BROKERS: "127.0.0.1:1",
  API_KEYS: "t:t-key-0123456789abcdef",
  LOCAL_MODEL_TOKENS_PER_SECOND: "200",
});
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();

const redis = realRedisPerFile();

function deps(): GenerationDeps {
  return {
    redis: redis(),
    producer,
    log: () => {},
    workerId: "one-worker",
    models: listModels(config),
    providerFor: createProviders(config),
    running: new Map(),
  };
}

async function newJob() {
  const { job } = await submitJob({ redis: redis(), producer: async () => producer, models: listModels(config) }, "t", {
    tenant_id: "t",
    model_name: "local-ngram",
    prompt: CYCLE,
    temperature: 0,
    max_tokens: 20,
  });
  const command = JSON.parse(sent.at(-1)!.messages[0].value as string);
  return { id: job.job_id, command };
}

/** Audit events sent, each request's messages one by one (events of jobs that end together share a request). */
const auditEvents = () =>
  sent
    .filter((r) => r.topic === TOPICS.completed.name)
    .flatMap((r) => r.messages.map((m) => JSON.parse(m.value as string)));
const auditOf = (id: string) => auditEvents().find((e) => e.job_id === id);
const audits = (id: string) => auditEvents().filter((e) => e.job_id === id).length;
const control = (runId: string) => ({ heartbeat: async () => {}, shutdown: new AbortController().signal, runId });

it("runs a job once when one process gets it twice", async () => {
  const { id, command } = await newJob();
  const outcomes = await Promise.all([
    runGeneration(deps(), command, control("one-worker:generation:1")),
    runGeneration(deps(), command, control("one-worker:generation:2")),
  ]);
  expect(outcomes.sort()).toEqual(["finished", "skipped"]);
  expect(await redis().hget(jobKeys.state(id), "attempts")).toBe("1");
  expect(audits(id)).toBe(1);
});

it("ends a job cancelled while queued once: the claim takes no lease, and there is one final message and one audit event", async () => {
  const { id, command } = await newJob();
  expect((await cancelJob(redis(), "t", id))?.status).toBe("CANCELLED");
  // The claim checks, takes the lease and starts in one script: a final job is not started.
  expect(await generationSteps(deps(), command, "run-1").claim()).toEqual({ done: "skipped" });
  expect(await redis().exists(jobKeys.lease(id))).toBe(0);

  const messages = (await redis().lrange(jobKeys.events(id), 0, -1)).map((raw) => JSON.parse(raw));
  expect(messages).toEqual([{ seq: 1, delta: "", is_final: true, status: "CANCELLED", finish_reason: "cancelled" }]);
  expect(await redis().hmget(jobKeys.state(id), "status", "attempts", "worker_id", "audited")).toEqual([
    "CANCELLED",
    "0",
    null,
    "1",
  ]);
  expect(audits(id)).toBe(1);
  expect(auditOf(id)).toMatchObject({ status: "CANCELLED", finish_reason: "cancelled" });
  // A redelivery of the command finds it audited: still one of each.
  expect(await runGeneration(deps(), command, control("run-2"))).toBe("skipped");
  expect(await redis().llen(jobKeys.events(id))).toBe(1);
  expect(audits(id)).toBe(1);
}, 60_000);

it("claims nothing while another run holds the job's lease: the job stays queued, unstarted", async () => {
  const { id, command } = await newJob();
  expect(await takeLease(redis(), jobKeys.lease(id), "run-b", 60_000)).toBe("");
  expect(await generationSteps(deps(), command, "run-a").claim()).toEqual({ heldBy: "run-b" });
  expect(await redis().hmget(jobKeys.state(id), "status", "attempts", "run_id")).toEqual(["QUEUED", "0", null]);
  expect(await redis().get(jobKeys.lease(id))).toBe("run-b");
});

it("gives the lease and the key slot up with the audit mark when a job finishes", async () => {
  const { id, command } = await newJob();
  const slot = `slot-${id}`;
  await redis().zadd(slot, Date.now() + 60_000, "run-a");
  const slotRelease = () => [["ZREM", slot, "run-a"] as RedisCommand];
  expect(await runGeneration(deps(), command, { ...control("run-a"), slotRelease })).toBe("finished");
  expect(await redis().hmget(jobKeys.state(id), "status", "audited")).toEqual(["COMPLETED", "1"]);
  expect(await redis().exists(jobKeys.lease(id))).toBe(0);
  expect(await redis().exists(slot)).toBe(0);
  expect(audits(id)).toBe(1);
});

/**
 * Starts run-a on a new job and returns once it holds the lease and generates; its model then
 * waits for `release`, so the job stays RUNNING under run-a for whatever the test does meanwhile.
 */
async function startHeldRun() {
  const { id, command } = await newJob();
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held: Provider = {
    async *generate() {
      yield { delta: "held" };
      await gate;
    },
  };
  const first = runGeneration({ ...deps(), leaseMs: 60_000, providerFor: () => held }, command, control("run-a"));
  await waitFor(async () => (await redis().lrange(jobKeys.events(id), 0, -1)).length > 0, {
    intervalMs: 5,
    what: "run-a to start generating",
  });
  return { id, first, release };
}

it("drops the final write of a run whose lease another run took", async () => {
  const { id, first, release } = await startHeldRun();
  // The lease moves to another run (as after a long pause of the first worker).
  await redis().set(jobKeys.lease(id), "run-b", "PX", 60_000);
  expect(await takeLease(redis(), jobKeys.lease(id), "run-a", 60_000)).toBe("run-b");
  release();
  expect(await first).toBe("handed-back");
  expect(await redis().hget(jobKeys.state(id), "status")).toBe("RUNNING");
  expect(audits(id)).toBe(0);
});

it("writes nothing over a job another run finished while this run's lease had lapsed: one result, one final message, counted once", async () => {
  const { id, first, release } = await startHeldRun();
  // run-a's lease lapsed, run-b took the job, finished it (its final write counted it) and let go: all at once.
  await redis()
    .multi()
    .hset(jobKeys.state(id), { status: "COMPLETED", output: "run-b's", run_id: "run-b", usage_counted: "1" })
    .del(jobKeys.lease(id))
    .exec();
  release();
  expect(await first).toBe("handed-back");
  const state = await redis().hgetall(jobKeys.state(id));
  expect([state.status, state.output, state.run_id]).toEqual(["COMPLETED", "run-b's", "run-b"]);
  const finals = (await redis().lrange(jobKeys.events(id), 0, -1)).filter((m) => JSON.parse(m).is_final);
  expect(finals).toEqual([]);
});

it("counts a finished job's usage in its final write", async () => {
  const { id, command } = await newJob();
  const field = usageField("jobs", "local-ngram", "COMPLETED");
  // This hour's and the next's, should the job end after the hour turns.
  const hour = bucketStart(Date.now(), "hour");
  const hours = [hour, hour + 3_600_000].map((start) => usageKeys.bucket("jobs", "t", "hour", start));
  const counted = async () => {
    await foldUsage(redis());
    return (await Promise.all(hours.map((key) => redis().hget(key, field)))).reduce((n, v) => n + Number(v ?? 0), 0);
  };
  const before = await counted();
  expect(await runGeneration(deps(), command, control("run-1"))).toBe("finished");
  const state = await redis().hgetall(jobKeys.state(id));
  expect([state.status, state.usage_counted]).toEqual(["COMPLETED", "1"]);
  // Counted in the final write: pending until the next fold, then in the hour's bucket.
  expect(await redis().lrange(usageKeys.pending, 0, -1)).toHaveLength(1);
  expect(await counted()).toBe(before + 1);
});

it("copies a FAILED job to the DLQ once even when the first DLQ write is refused", async () => {
  const { id, command } = await newJob();
  const unknown = { ...command, model_name: "no-such-model" };
  let refuse = true;
  const flaky = {
    send: async (record: ProducerRecord) => {
      if (record.topic === TOPICS.dlq.name && refuse) {
        refuse = false;
        throw new Error("broker away");
      }
      sent.push(record);
    },
  } as unknown as Producer;
  await expect(runGeneration({ ...deps(), producer: flaky }, unknown, control("run-1"))).rejects.toThrow("broker away");
  // The consumer tries the message again: the job is final, only what is missing is done.
  expect(await runGeneration({ ...deps(), producer: flaky }, unknown, control("run-2"))).toBe("skipped");
  expect(
    sent.filter((r) => r.topic === TOPICS.dlq.name && JSON.parse(r.messages[0].value as string).job_id === id),
  ).toHaveLength(1);
  expect(audits(id)).toBe(1);
  expect(await redis().hget(jobKeys.state(id), "status")).toBe("FAILED");
});

it("sends the same audit event again when a redelivery, on another worker, finds it unmarked: it names the worker that ran the job", async () => {
  const { id, command } = await newJob();
  // The broker writes the event but its answer is lost (it went away): the produce fails.
  let loseAnswer = true;
  const lossy = {
    send: async (record: ProducerRecord) => {
      sent.push(record);
      if (record.topic === TOPICS.completed.name && loseAnswer) {
        loseAnswer = false;
        throw new Error("connection closed");
      }
    },
  } as unknown as Producer;
  await expect(runGeneration({ ...deps(), producer: lossy }, command, control("run-1"))).rejects.toThrow(
    "connection closed",
  );
  expect(await redis().hmget(jobKeys.state(id), "status", "worker_id", "audited")).toEqual([
    "COMPLETED",
    "one-worker",
    null,
  ]);
  expect(await runGeneration({ ...deps(), workerId: "other-worker", producer: lossy }, command, control("run-2"))).toBe(
    "skipped",
  );
  expect(await redis().hget(jobKeys.state(id), "audited")).toBe("1");
  const copies = auditEvents().filter((e) => e.job_id === id);
  expect(copies).toHaveLength(2);
  expect(copies[1]).toEqual(copies[0]);
  expect(copies[0].worker_id).toBe("one-worker");
});

it("leaves a finished job's audit event to the run that finished it while that run still holds the lease: a redelivery on another worker waits, then sends none", async () => {
  const { id, command } = await newJob();
  // run-a's produce of the audit event is held up: the job is COMPLETED, not yet marked audited.
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow = {
    send: async (record: ProducerRecord) => {
      sent.push(record);
      if (record.topic === TOPICS.completed.name) await gate;
    },
  } as unknown as Producer;
  const first = runGeneration({ ...deps(), producer: slow, leaseMs: 60_000 }, command, control("run-a"));
  await waitFor(async () => audits(id) === 1, { intervalMs: 5, what: "run-a to send its audit event" });
  expect(await redis().hmget(jobKeys.state(id), "status", "audited")).toEqual(["COMPLETED", null]);
  // The partition moved (a rebalance): another worker's delivery of the same command waits for run-a.
  const redelivered = generationSteps({ ...deps(), workerId: "other-worker" }, command, "run-b");
  expect(await redelivered.claim()).toEqual({ heldBy: "run-a" });
  release();
  expect(await first).toBe("finished");
  expect(await redelivered.claim()).toEqual({ done: "skipped" });
  expect(audits(id)).toBe(1);
});

it("records why generation stopped in the state, the final stream message and the audit event", async () => {
  const says = (chunks: GenerationChunk[]): Provider => ({
    async *generate() {
      yield* chunks;
    },
  });
  const cases: [string, GenerationChunk[], string][] = [
    ["the provider's own word", [{ delta: "cut" }, { finish_reason: "length" }], "length"],
    ["a natural end when the provider is silent and under max_tokens", [{ delta: "short" }], "stop"],
    [
      "max_tokens reached when the provider is silent and produced that many",
      [
        {
          delta:
            "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty",
        },
      ],
      "length",
    ],
  ];
  for (const [, chunks, expected] of cases) {
    const { id, command } = await newJob();
    expect(await runGeneration({ ...deps(), providerFor: () => says(chunks) }, command, control("run-1"))).toBe(
      "finished",
    );
    const state = await redis().hgetall(jobKeys.state(id));
    expect([state.status, state.finish_reason]).toEqual(["COMPLETED", expected]);
    const final = JSON.parse((await redis().lrange(jobKeys.events(id), -1, -1))[0]);
    expect(final).toMatchObject({ is_final: true, status: "COMPLETED", finish_reason: expected });
    expect(auditOf(id)).toMatchObject({ status: "COMPLETED", finish_reason: expected });
  }

  const { id, command } = await newJob();
  await runGeneration(deps(), { ...command, model_name: "no-such-model" }, control("run-1"));
  expect(await redis().hget(jobKeys.state(id), "finish_reason")).toBe("error");
  expect(auditOf(id)).toMatchObject({ status: "FAILED", finish_reason: "error" });
});

it("produces audit events that their topic's schema reads whole, for a finished and a failed job", async () => {
  const finished = await newJob();
  await runGeneration(deps(), finished.command, control("run-1"));
  const failed = await newJob();
  await runGeneration(deps(), { ...failed.command, model_name: "no-such-model" }, control("run-1"));
  for (const id of [finished.id, failed.id]) {
    const event = auditOf(id);
    // Parsing drops fields the schema does not declare: equal only if the schema names every one.
    expect(TOPICS.completed.schema.parse(event)).toEqual(event);
  }
  expect([auditOf(finished.id).status, auditOf(failed.id).status]).toEqual(["COMPLETED", "FAILED"]);
});

it("marks a job audited only once its event is in the audit archive too; a failed archive write is tried again on redelivery", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "run-generation-archive-"));
  try {
    // The archive's directory is a file at first: its write fails as a full or read-only disk would.
    writeFileSync(path.join(dir, "audit"), "");
    const archive = createAuditArchive(path.join(dir, "audit"), "one-worker");
    const { id, command } = await newJob();
    await expect(runGeneration({ ...deps(), auditArchive: archive }, command, control("run-1"))).rejects.toThrow();
    expect(await redis().hmget(jobKeys.state(id), "status", "audited")).toEqual(["COMPLETED", null]);

    rmSync(path.join(dir, "audit"));
    expect(await runGeneration({ ...deps(), auditArchive: archive }, command, control("run-2"))).toBe("skipped");
    expect(await redis().hget(jobKeys.state(id), "audited")).toBe("1");
    // A redelivery of an audited job writes nothing more.
    expect(await runGeneration({ ...deps(), auditArchive: archive }, command, control("run-3"))).toBe("skipped");
    await archive.close();
    const lines: string[] = [];
    await readAuditArchive(path.join(dir, "audit"), (line) => lines.push(line));
    // The first produce went through while the archive failed: the topic has the job's event twice
    // (at least once, as after a crash), the archive once, as the second produce sent it.
    expect(audits(id)).toBe(2);
    expect(lines.map((line) => JSON.parse(line))).toEqual([auditEvents().filter((e) => e.job_id === id)[1]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
