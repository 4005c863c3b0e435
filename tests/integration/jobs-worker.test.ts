import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import Redis from "ioredis";
import { Partitioners, type KafkaMessage } from "kafkajs";
import { readAuditArchive } from "@/lib/jobs/audit-archive";
import { jobKeys } from "@/lib/jobs/keys";
import { createKafka } from "@/lib/kafka";
import { isFinalJob } from "@/lib/jobs/status";
import { CONSUMER_GROUPS, TOPICS } from "@/lib/topics";
import { WORKERS_KEY } from "@/lib/live-workers";
import { readSse, readTopic, ROOT, spawnWorker, waitFor, type WorkerProcess } from "../helpers";

/**
 * Generation jobs end to end on the real services: route handlers in this process, real worker
 * processes (worker/index.ts) in the consumer group, the real Redis and Kafka-protocol broker.
 */
const KEY = "tenant-key-0123456789abcdef";
const tenants = ["ordered", ...Array.from({ length: 8 }, (_, i) => `spread-${i}`)];
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();
/** The workers' audit archive, as npm start gives them with the embedded broker. */
const ARCHIVE_DIR = path.join(ROOT, ".test-data/jobs-worker-audit");
let env: Record<string, string>;
let redis: Redis;
const workers: WorkerProcess[] = [];
let routes: {
  jobs: typeof import("@/app/v1/jobs/route");
  stream: typeof import("@/app/jobs/[id]/stream/route");
  job: typeof import("@/app/jobs/[id]/route");
  cancel: typeof import("@/app/jobs/[id]/cancel/route");
};

beforeAll(async () => {
  env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: tenants.map((t) => `${t}:${t}-${KEY}`).join(","),
    LOCAL_MODEL_TOKENS_PER_SECOND: "25",
    WORKER_CONCURRENCY: "6",
    // Strict one-at-a-time order per tenant, the mode the ordering test pins.
    TENANT_CONCURRENCY: "1",
    AUDIT_ARCHIVE_DIR: ARCHIVE_DIR,
  };
  rmSync(ARCHIVE_DIR, { recursive: true, force: true });
  Object.assign(process.env, env);
  redis = new Redis(env.REDIS_URL);
  routes = {
    jobs: await import("@/app/v1/jobs/route"),
    stream: await import("@/app/jobs/[id]/stream/route"),
    job: await import("@/app/jobs/[id]/route"),
    cancel: await import("@/app/jobs/[id]/cancel/route"),
  };
  workers.push(spawnWorker(env, "worker-a"), spawnWorker(env, "worker-b"));
  await waitForBalancedGroup();
});

afterAll(async () => {
  for (const w of workers) writeFileSync(`.test-data/${w.id}.log`, w.output());
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));
  for (const w of workers) w.assertNoUncaught();
  const { getServices } = await import("@/lib/web/services");
  await (await getServices().producer()).disconnect().catch(() => {});
  getServices().redis.disconnect();
  getServices().hub();
  redis.disconnect();
});

/** Both workers hold partitions of the requests topic, and together all six. */
async function waitForBalancedGroup() {
  await waitFor(
    async () => {
      const seen = Object.values(await redis.hgetall(WORKERS_KEY)).map((raw) => JSON.parse(raw));
      const held = seen.filter((w) => workers.some((x) => x.id === w.id)).map((w) => w.assignments.generation ?? []);
      return held.length === 2 && held.every((p) => p.length > 0) && held.flat().length === 6;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: "two workers to share the partitions" },
  );
}

const auth = (tenant: string) => ({ authorization: `Bearer ${tenant}-${KEY}` });
async function submit(tenant: string, body: Record<string, unknown>): Promise<string> {
  const response = await routes.jobs.POST(
    new Request("http://x/v1/jobs", {
      method: "POST",
      headers: { ...auth(tenant), "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: tenant, model_name: "local-ngram", temperature: 0, ...body }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return (await response.json()).job_id;
}
const state = (id: string) => redis.hgetall(jobKeys.state(id));
const finished = (id: string, timeoutMs = 60_000): Promise<Record<string, string>> =>
  waitFor(
    async () => {
      const s = await state(id);
      return isFinalJob(s.status) ? s : undefined;
    },
    { timeoutMs, what: `job ${id} to finish` },
  );
const stream = (tenant: string, id: string, after = 0) =>
  routes.stream.GET(new Request(`http://x/jobs/${id}/stream?after=${after}`, { headers: auth(tenant) }), {
    params: Promise.resolve({ id }),
  });
const completedEvents = (ids: string[]) =>
  readTopic(inject("kafkaBrokers"), TOPICS.completed.name, (m) =>
    ids.every((id) => m.some((x) => JSON.parse(x.value!.toString()).job_id === id)),
  ).then((m) =>
    m
      .map((x) => ({ key: x.key?.toString(), ...JSON.parse(x.value!.toString()) }))
      .filter((e) => ids.includes(e.job_id)),
  );

/** The lines of the audit archive whose events are of `ids`. */
async function archivedEvents(ids: string[]): Promise<{ job_id: string }[]> {
  const events: { job_id: string }[] = [];
  await readAuditArchive(ARCHIVE_DIR, (line) => events.push(JSON.parse(line)));
  return events.filter((e) => ids.includes(e.job_id));
}

describe("generation jobs on the real stack", () => {
  it("streams deltas over time, ends COMPLETED with the full output, a 24 h expiry and one audit event", async () => {
    const id = await submit("spread-0", { prompt: CYCLE, max_tokens: 30 });
    const events = await readSse(await stream("spread-0", id));
    const deltas = events.filter((e) => e.event === "delta").map((e) => ({ id: Number(e.id), ...JSON.parse(e.data) }));
    // At temperature 0 the model keeps counting: max_tokens ends it.
    expect(deltas.at(-1)).toMatchObject({ is_final: true, status: "COMPLETED", finish_reason: "length" });
    expect(deltas.map((d) => d.id)).toEqual(deltas.map((_, i) => i + 1));
    const final = await state(id);
    expect(final.status).toBe("COMPLETED");
    expect(final.output).toBe(deltas.map((d) => d.delta).join(""));
    expect(final.output.length).toBeGreaterThan(20);
    for (const key of [jobKeys.state(id), jobKeys.events(id)]) {
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThan(86_300);
      expect(ttl).toBeLessThanOrEqual(86_400);
    }
    const job = await (
      await routes.job.GET(new Request(`http://x/jobs/${id}`, { headers: auth("spread-0") }), {
        params: Promise.resolve({ id }),
      })
    ).json();
    expect(job).toMatchObject({
      status: "COMPLETED",
      finish_reason: "length",
      output: final.output,
      attempts: 1,
      error: null,
    });
    expect(job.usage.completion_tokens).toBeGreaterThan(0);
    expect(job.usage.total_tokens).toBe(job.usage.prompt_tokens + job.usage.completion_tokens);
    expect(job.ttft_ms).toBeGreaterThanOrEqual(0);

    const [event] = await completedEvents([id]);
    expect(event).toMatchObject({
      key: "spread-0",
      job_id: id,
      tenant_id: "spread-0",
      model_name: "local-ngram",
      model_version: expect.stringContaining("local-ngram"),
      prompt: CYCLE,
      parameters: { temperature: 0, max_tokens: 30 },
      output: final.output,
      status: "COMPLETED",
      finish_reason: "length",
      usage: job.usage,
      cost: { currency: "USD", amount: 0 },
      timing: {
        queued_ms: expect.any(Number),
        ttft_ms: expect.any(Number),
        generation_ms: expect.any(Number),
        tokens_per_second: expect.any(Number),
      },
      worker_id: expect.stringMatching(/^worker-[ab]$/),
      attempt: 1,
    });
  });

  it("runs one tenant's commands in order", async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await submit("ordered", { prompt: `${CYCLE} ${i}`, max_tokens: 4 }));
    const states = [];
    for (const id of ids) states.push(await finished(id));
    for (let i = 1; i < states.length; i++) {
      expect(Date.parse(states[i].started_at)).toBeGreaterThanOrEqual(Date.parse(states[i - 1].completed_at));
    }
  });

  it("never holds a job back behind a slow one on another partition", async () => {
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: 6 }, (_, i) => ({
      partitionId: i,
      leader: 1,
      partitionErrorCode: 0,
      replicas: [1],
      isr: [1],
    }));
    const partitionOf = (tenant: string) =>
      partitioner({ topic: TOPICS.requests.name, partitionMetadata, message: { key: tenant, value: "" } });
    const slowTenant = "spread-3";
    // 5,000 tokens at 25 tokens/s: the slow job is still running when the fast ones end, however
    // busy the machine; the test cancels it.
    const slow = await submit(slowTenant, { prompt: CYCLE, max_tokens: 5000 });
    await waitFor(async () => (await state(slow)).status === "RUNNING", { what: "the slow job to start" });
    const others = tenants.filter((t) => partitionOf(t) !== partitionOf(slowTenant));
    expect(others.length).toBeGreaterThan(3);
    const fast = [];
    for (const t of others) fast.push(await submit(t, { prompt: `${CYCLE} quick`, max_tokens: 3 }));
    const fastStates = await Promise.all(fast.map((id) => finished(id)));
    expect((await state(slow)).status).toBe("RUNNING");
    expect(fastStates.map((s) => s.status)).toEqual(fast.map(() => "COMPLETED"));
    const cancelled = await routes.cancel.POST(
      new Request(`http://x/jobs/${slow}/cancel`, { method: "POST", headers: auth(slowTenant) }),
      { params: Promise.resolve({ id: slow }) },
    );
    expect(cancelled.status).toBe(200);
    expect((await finished(slow)).status).toBe("CANCELLED");
  });

  it("gives a second subscriber that connects mid-stream the full text exactly once", async () => {
    const id = await submit("spread-1", { prompt: CYCLE, max_tokens: 60 });
    const first = stream("spread-1", id).then((r) => readSse(r));
    await waitFor(async () => (await redis.llen(jobKeys.events(id))) >= 8, { what: "a few deltas" });
    const second = await readSse(await stream("spread-1", id));
    const firstEvents = await first;
    const texts = [firstEvents, second].map((events) => {
      const seqs = events.map((e) => Number(e.id));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      return events.map((e) => JSON.parse(e.data).delta).join("");
    });
    const final = await state(id);
    expect(texts).toEqual([final.output, final.output]);

    // A client resuming after seq 5 gets the rest, with no gap and no duplicate.
    const resumed = await readSse(await stream("spread-1", id, 5));
    expect(resumed.map((e) => e.id)).toEqual(firstEvents.slice(5).map((e) => e.id));
    expect(resumed.map((e) => JSON.parse(e.data).delta).join("")).toBe(
      firstEvents
        .slice(5)
        .map((e) => JSON.parse(e.data).delta)
        .join(""),
    );
  });

  it("shares the load between two workers of the group", async () => {
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push(await submit(`spread-${i}`, { prompt: `${CYCLE} ${i}`, max_tokens: 10 }));
    await Promise.all(ids.map((id) => finished(id)));
    const events = await completedEvents(ids);
    expect(new Set(events.map((e) => e.job_id)).size).toBe(8);
    expect(new Set(events.map((e) => e.worker_id))).toEqual(new Set(["worker-a", "worker-b"]));
  });

  it("keeps every finished job's event in the audit archive once, as produced; a redelivered audited job adds none", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 24; i++)
      ids.push(await submit(`spread-${i % 8}`, { prompt: `${CYCLE} burst ${i}`, max_tokens: 3 }));
    await waitFor(
      async () =>
        (await Promise.all(ids.map((id) => redis.hget(jobKeys.state(id), "audited")))).every((a) => a === "1"),
      { timeoutMs: 90_000, intervalMs: 200, what: "every job of the burst audited" },
    );
    const byId = (events: { job_id: string }[]) => [...events].sort((a, b) => a.job_id.localeCompare(b.job_id));
    const archived = await archivedEvents(ids);
    expect(archived.map((e) => e.job_id).sort()).toEqual([...ids].sort());
    const produced = (await completedEvents(ids)).map(({ key: _key, ...event }) => event);
    expect(byId(archived)).toEqual(byId(produced));

    // The command of a job already audited, delivered again (as after a worker died before its commit).
    const [redelivered] = ids;
    const commandOf = (m: KafkaMessage) => JSON.parse(m.value!.toString()).job_id === redelivered;
    const original = (await readTopic(inject("kafkaBrokers"), TOPICS.requests.name, (m) => m.some(commandOf))).find(
      commandOf,
    )!;
    const { getServices } = await import("@/lib/web/services");
    const [sent] = await (
      await getServices().producer()
    ).send({ topic: TOPICS.requests.name, acks: -1, messages: [{ key: original.key, value: original.value }] });
    const admin = createKafka([inject("kafkaBrokers")], "jobs-worker-offsets").admin();
    await admin.connect();
    try {
      // Committed past it: a worker took it and settled it.
      await waitFor(
        async () => {
          const [{ partitions }] = await admin.fetchOffsets({
            groupId: CONSUMER_GROUPS.generation,
            topics: [TOPICS.requests.name],
          });
          const committed = partitions.find((p) => p.partition === sent.partition)?.offset;
          return Number(committed) > Number(sent.baseOffset);
        },
        { timeoutMs: 60_000, intervalMs: 200, what: "the redelivered command to be settled" },
      );
    } finally {
      await admin.disconnect();
    }
    expect((await archivedEvents([redelivered])).length).toBe(1);
    expect((await completedEvents([redelivered])).length).toBe(1);
  });

  it("makes a job visible when its submitter lost Redis between the broker's ack and the reveal", async () => {
    const { getServices } = await import("@/lib/web/services");
    const { getConfig } = await import("@/lib/config");
    const { listModels } = await import("@/lib/jobs/list-models");
    const { submitJob } = await import("@/lib/jobs/submit-job");
    // A Redis client that fails the reveal (the script naming the tenant's index): the claim and the produce go through.
    const failing = new Redis(env.REDIS_URL);
    const tenantIndex = jobKeys.tenantIndex("spread-4");
    for (const name of ["evalsha", "eval"] as const) {
      const original = failing[name].bind(failing) as (...args: unknown[]) => Promise<unknown>;
      Object.assign(failing, {
        [name]: (...args: unknown[]) =>
          args.includes(tenantIndex)
            ? Promise.reject(new Error("the connection to Redis was lost"))
            : original(...args),
      });
    }
    const body = {
      tenant_id: "spread-4",
      model_name: "local-ngram",
      prompt: `${CYCLE} lost`,
      temperature: 0,
      max_tokens: 5,
      job_id: crypto.randomUUID(),
    };
    await expect(
      submitJob(
        { redis: failing, producer: getServices().producer, models: listModels(getConfig()) },
        "spread-4",
        body,
      ),
    ).rejects.toThrow("lost");
    failing.disconnect();
    // The claim was written and only the reveal failed. Whether the record still says
    // `submitting` here is a race with the idle worker, which may reveal it first; what matters
    // follows: the worker makes the job visible and finishes it.
    expect((await state(body.job_id)).job_id).toBe(body.job_id);

    const final = await finished(body.job_id);
    expect(final.status).toBe("COMPLETED");
    expect(final.submitting).toBeUndefined();
    const read = await routes.job.GET(new Request(`http://x/jobs/${body.job_id}`, { headers: auth("spread-4") }), {
      params: Promise.resolve({ id: body.job_id }),
    });
    expect(read.status).toBe(200);
    expect(await redis.zscore(jobKeys.tenantIndex("spread-4"), body.job_id)).not.toBeNull();
    // The client's retry with the same job_id and body gets the job, not a 409.
    const retry = await routes.jobs.POST(
      new Request("http://x/v1/jobs", {
        method: "POST",
        headers: { ...auth("spread-4"), "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
      undefined,
    );
    expect(retry.status).toBe(200);
    expect((await retry.json()).job_id).toBe(body.job_id);
  });

  it("finishes a job whose worker is killed mid-generation on the other worker, once", async () => {
    // Long enough (24 s at 25 tokens/s) that it is still generating when the kill lands on a busy machine.
    const id = await submit("spread-2", { prompt: CYCLE, max_tokens: 600 });
    const running = await waitFor(
      async () => {
        const s = await state(id);
        return s.status === "RUNNING" && (await redis.llen(jobKeys.events(id))) >= 5 ? s : undefined;
      },
      { what: "the job to be generating" },
    );
    const victim = workers.find((w) => w.id === running.worker_id)!;
    victim.child.kill("SIGKILL");
    await victim.exited;
    writeFileSync(`.test-data/${victim.id}-killed.log`, victim.output());

    const final = await finished(id, 90_000);
    expect(final.status).toBe("COMPLETED");
    expect(final.worker_id).not.toBe(victim.id);
    expect(Number(final.attempts)).toBe(2);
    const events = await completedEvents([id]);
    expect(events).toHaveLength(1);

    // Replay starts from the restart: the client sees a reset, then one clean generation.
    const replay = await readSse(await stream("spread-2", id));
    expect(replay[0].event).toBe("reset");
    expect(
      replay
        .slice(1)
        .map((e) => JSON.parse(e.data).delta)
        .join(""),
    ).toBe(final.output);

    workers.splice(workers.indexOf(victim), 1);
  });
});
