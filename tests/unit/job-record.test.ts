import type { Producer } from "kafkajs";
import { describe, expect, it } from "vitest";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { jobRecordSchema, parseJobRecord, readJobRecord, type JobHash } from "@/lib/jobs/job-record";
import { jobKeys } from "@/lib/jobs/keys";
import { readJob } from "@/lib/jobs/read-job";
import { finalStreamMessage, parseStreamMessage } from "@/lib/jobs/stream-message";
import { submitJob } from "@/lib/jobs/submit-job";
import { readJobsByStatus } from "@/lib/system/read-system-status";
import { realRedisPerFile } from "./real-redis";

/** The job hash as every writer leaves it parses with the one schema, the Lua scripts' writes included. */
const redis = realRedisPerFile();
const producer = { send: async () => {} } as unknown as Producer;
const models = [
  {
    id: "local-ngram",
    provider: "local" as const,
    version: "1",
    description: "",
    price: { input_per_million: 0, output_per_million: 0 },
  },
];
const submit = (tenant: string, prompt = "hello") =>
  submitJob({ redis: redis(), producer: async () => producer, models }, tenant, {
    tenant_id: tenant,
    model_name: "local-ngram",
    prompt,
    temperature: 0.5,
    max_tokens: 10,
  }).then((r) => r.job.job_id);

describe("the job record", () => {
  it("parses what submit-job's claim script writes", async () => {
    const id = await submit("record-a");
    const record = await readJobRecord(redis(), id);
    expect(record).toMatchObject({
      job_id: id,
      tenant_id: "record-a",
      status: "QUEUED",
      temperature: 0.5,
      max_tokens: 10,
      attempts: 0,
      submitting: false,
      cancel_requested: false,
    });
    expect(record!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it("parses what the cancel script writes, and the final stream message it writes is the declared one", async () => {
    const id = await submit("record-b");
    await cancelJob(redis(), "record-b", id, new Date("2026-01-01T00:00:00Z"));
    expect(await readJobRecord(redis(), id)).toMatchObject({
      status: "CANCELLED",
      finish_reason: "cancelled",
      cancel_requested: true,
      completed_at: "2026-01-01T00:00:00.000Z",
      output: "",
    });
    const messages = (await redis().lrange(jobKeys.events(id), 0, -1)).map(parseStreamMessage);
    expect(messages).toEqual([{ seq: 1, ...finalStreamMessage("CANCELLED", "cancelled") }]);
    expect(await readJob(redis(), "record-b", id)).toMatchObject({ status: "CANCELLED", finish_reason: "cancelled" });
  });

  it("only flags a running job when asked to cancel it", async () => {
    const id = await submit("record-c");
    await redis().hset(jobKeys.state(id), { status: "RUNNING" } satisfies JobHash);
    await cancelJob(redis(), "record-c", id);
    const record = await readJobRecord(redis(), id);
    expect(record).toMatchObject({ status: "RUNNING", cancel_requested: true });
    expect(record!.finish_reason).toBeUndefined();
    expect(await redis().llen(jobKeys.events(id))).toBe(0);
  });

  it("is no job when a field it needs is missing or not what it declares", () => {
    expect(parseJobRecord({})).toBeUndefined();
    const hash = {
      job_id: "j",
      tenant_id: "t",
      model_name: "m",
      temperature: "0",
      max_tokens: "1",
      status: "QUEUED",
      created_at: "2026-01-01T00:00:00Z",
    };
    expect(parseJobRecord(hash)).toMatchObject({ job_id: "j", submitting: false, attempts: 0, prompt: "" });
    expect(parseJobRecord({ ...hash, status: "DONE" })).toBeUndefined();
    expect(jobRecordSchema.safeParse({ ...hash, ttft_ms: "", usage: "not json" }).data).toMatchObject({
      ttft_ms: undefined,
      usage: undefined,
    });
  });

  it("is what the system page counts by status", async () => {
    const ids = [await submit("record-d", "one"), await submit("record-d", "two"), await submit("record-d", "three")];
    await cancelJob(redis(), "record-d", ids[1]);
    const jobs = await readJobsByStatus(redis(), "record-d");
    expect(jobs.by_status).toEqual({ QUEUED: 2, RUNNING: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 1 });
    expect(jobs.counted).toBe(3);
    expect(jobs.recent_completed).toEqual([
      expect.objectContaining({ job_id: ids[1], status: "CANCELLED", model_name: "local-ngram", worker_id: null }),
    ]);
  });
});
