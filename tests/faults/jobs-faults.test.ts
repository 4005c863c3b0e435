import http from "node:http";
import type { AddressInfo } from "node:net";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobKeys } from "@/lib/jobs/keys";
import { isFinalJob } from "@/lib/jobs/status";
import { TOPICS } from "@/lib/topics";
import { startRedis, type RedisServer } from "../../scripts/lib/redis-server";
import { parseSse, readTopic, waitFor } from "../helpers";
import { startTestStack, submitJob, type TestStack } from "../stack";

/**
 * Faults on the real stack: web server, worker processes, Redis and the broker as separate
 * processes, broken on purpose. Each test counts what was answered and what was lost.
 */
const TENANTS = Array.from({ length: 8 }, (_, i) => `t${i}`);
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();
let stack: TestStack;
let redis: Redis;
let failingModel: http.Server;
let restartedRedis: RedisServer | undefined;

beforeAll(async () => {
  // A model server that always fails, for the poison-model case.
  failingModel = http.createServer((_req, res) =>
    res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"boom"}}'),
  );
  await new Promise<void>((r) => failingModel.listen(0, "127.0.0.1", r));
  stack = await startTestStack(
    "jobs",
    {
      WORKERS: "2",
      WORKER_CONCURRENCY: "6",
      LOCAL_MODEL_TOKENS_PER_SECOND: "40",
      RATE_LIMIT_PER_MINUTE: "0",
      LLM_BASE_URL: `http://127.0.0.1:${(failingModel.address() as AddressInfo).port}/v1`,
      LLM_MODELS: "always-fails",
    },
    TENANTS,
  );
  redis = new Redis(stack.env.REDIS_URL!, { maxRetriesPerRequest: null });
  redis.on("error", () => {});
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
  await restartedRedis?.stop();
  failingModel?.close();
});

const state = (id: string) => redis.hgetall(jobKeys.state(id));
async function allFinal(ids: string[], timeoutMs: number) {
  return waitFor(
    async () => {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hget(jobKeys.state(id), "status");
      const statuses = ((await pipeline.exec()) ?? []).map(([, s]) => s as string);
      return statuses.every(isFinalJob) ? statuses : undefined;
    },
    { timeoutMs, intervalMs: 250, what: `${ids.length} jobs to finish` },
  );
}
const completedEventsFor = async (ids: string[]) => {
  const wanted = new Set(ids);
  const messages = await readTopic(
    stack.env.KAFKA_BROKERS!,
    TOPICS.completed.name,
    (m) => {
      const seen = new Set(m.map((x) => JSON.parse(x.value!.toString()).job_id));
      return ids.every((id) => seen.has(id));
    },
    120_000,
  );
  return messages.map((m) => JSON.parse(m.value!.toString())).filter((e) => wanted.has(e.job_id));
};
/** Job ids whose completed events are not exactly one: a Set of ids would hide a duplicate. */
const notOnceEach = (events: { job_id: string }[], ids: string[]) => {
  const counts = new Map(ids.map((id) => [id, 0]));
  for (const e of events) counts.set(e.job_id, (counts.get(e.job_id) ?? 0) + 1);
  return [...counts].filter(([, n]) => n !== 1).map(([id, n]) => `${id}: ${n}`);
};
/**
 * Job ids with no completed event, or with copies that differ. Where the broker went away, a
 * produce it wrote but whose answer the outage cut is sent again (the producer is not idempotent:
 * the embedded broker has none), so a job may have two events; they must be the same event, which
 * a consumer keyed on job_id reads as one. A second run of the job would differ (worker, attempt).
 */
const notOneEventEach = (events: Record<string, unknown>[], ids: string[]) => {
  const copies = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]));
  for (const e of events) copies.get(e.job_id as string)?.add(JSON.stringify(e));
  return [...copies].filter(([, distinct]) => distinct.size !== 1).map(([id, distinct]) => `${id}: ${distinct.size}`);
};
/**
 * Waits until Redis has written to its AOF everything it answered before. The test then kills
 * it with SIGKILL, which loses what Redis had not written yet (what it wrote, the OS keeps; fsync
 * matters only when the machine itself goes down). WAITAOF says so on Redis 7.2+; Debian's 7.0
 * has no WAITAOF, and there an empty AOF buffer (INFO persistence) means the same.
 */
async function waitForAofWrite(client: Redis) {
  try {
    await client.call("WAITAOF", "1", "0", "5000");
    return;
  } catch (error) {
    if (!/unknown command/i.test(String(error))) throw error;
  }
  await waitFor(async () => /^aof_buffer_length:0\r?$/m.test(await client.info("persistence")), {
    timeoutMs: 10_000,
    intervalMs: 20,
    what: "Redis to write its AOF",
  });
}
/** Applies a stream the way a client must: a reset drops the text so far. */
const textOf = (events: ReturnType<typeof parseSse>) =>
  events.reduce((text, e) => (e.event === "reset" ? "" : text + JSON.parse(e.data).delta), "");

describe("faults", () => {
  it("workers killed with SIGKILL mid-generation, three times over a batch: every job COMPLETED once, clean output", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(
        (
          await (
            await submitJob(stack, TENANTS[i % TENANTS.length], { prompt: `${CYCLE} ${i}`, max_tokens: 240 })
          ).json()
        ).job_id,
      );
    const victims: string[] = [];
    for (let kill = 0; kill < 3; kill++) {
      const running = await waitFor(
        async () => {
          for (const id of ids) {
            const s = await state(id);
            if (s.status === "RUNNING" && (await redis.llen(jobKeys.events(id))) >= 3 && !victims.includes(id))
              return s;
          }
          return undefined;
        },
        { timeoutMs: 90_000, what: "a running job" },
      );
      victims.push(running.job_id);
      const worker = stack.workers.find((w) => running.worker_id === w.name)!;
      await worker.kill("SIGKILL");
      worker.restart();
    }
    const statuses = await allFinal(ids, 240_000);
    expect(statuses).toEqual(ids.map(() => "COMPLETED"));
    const events = await completedEventsFor(ids);
    expect(notOnceEach(events, ids)).toEqual([]);
    for (const id of victims) {
      const final = await state(id);
      expect(Number(final.attempts)).toBeGreaterThanOrEqual(2);
      const stream = parseSse(await (await stack.fetchAs(final.tenant_id, `/jobs/${id}/stream`)).text());
      expect(stream[0].event).toBe("reset");
      expect(textOf(stream)).toBe(final.output);
      // The aborted attempt's text is not in the output: it is one generation from the prompt.
      expect(final.output).toBe(events.find((e) => e.job_id === id).output);
    }
  });

  it("the broker stopped while clients submit: quick 503s with Retry-After, nothing answered 202 is lost, it all resumes", async () => {
    const accepted: string[] = [];
    const refused: number[] = [];
    const other: number[] = [];
    let stop = false;
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const started = Date.now();
        const response = await submitJob(stack, TENANTS[n], { prompt: `${CYCLE} broker ${n} ${i}`, max_tokens: 5 });
        if (response.status === 202) accepted.push((await response.json()).job_id);
        else if (response.status === 503) {
          expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
          expect((await response.json()).status).toBe(503);
          refused.push(Date.now() - started);
        } else other.push(response.status);
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await waitFor(() => accepted.length >= 20, { what: "submissions before the fault" });
    await stack.broker!.down();
    await waitFor(() => refused.length >= 8, { timeoutMs: 60_000, what: "refusals while the broker is down" });
    const acceptedBeforeUp = accepted.length;
    await stack.broker!.up();
    await waitFor(() => accepted.length >= acceptedBeforeUp + 20, {
      timeoutMs: 60_000,
      what: "submissions after the broker is back",
    });
    stop = true;
    await Promise.all(clients);

    expect(other).toEqual([]);
    expect(Math.max(...refused)).toBeLessThan(6000);
    const statuses = await allFinal(accepted, 180_000);
    expect(statuses.filter((s) => s !== "COMPLETED")).toEqual([]);
    const events = await completedEventsFor(accepted);
    expect(notOneEventEach(events, accepted)).toEqual([]);
  });

  it("Redis killed and restarted mid-run: written state survives (AOF), everyone reconnects, a stream client resumes", async () => {
    const done = await submitJob(stack, "t1", { prompt: CYCLE, max_tokens: 10 });
    const doneId = (await done.json()).job_id;
    await allFinal([doneId], 60_000);
    // The worker's last write to a finished job marks its audit event produced.
    await waitFor(async () => (await state(doneId)).audited === "1", { what: "the job's audit event" });
    await waitForAofWrite(redis);
    const before = await state(doneId);

    const runningId = (await (await submitJob(stack, "t2", { prompt: CYCLE, max_tokens: 120 })).json()).job_id;
    // The client is streaming before Redis dies: a stream request the server had not yet answered
    // when the kill landed (a busy machine) meets Redis down instead, which is another case.
    let received = "";
    const streaming = stack.fetchAs("t2", `/jobs/${runningId}/stream`).then(async (response) => {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      for (let read = await reader.read(); !read.done; read = await reader.read())
        received += decoder.decode(read.value, { stream: true });
      return received;
    });
    await waitFor(() => parseSse(received).length >= 10, { what: "the stream client to receive the job's deltas" });

    await stack.redis!.kill();
    const port = stack.redis!.port;
    restartedRedis = await startRedis({ dir: `${stack.logFile.replace(/stack\.log$/, "")}redis`, port });

    const after = await waitFor(() => state(doneId).then((s) => (s.status ? s : undefined)), {
      timeoutMs: 30_000,
      what: "Redis back",
    });
    expect(after).toEqual(before);
    const [final] = await allFinal([runningId], 120_000);
    expect(final).toBe("COMPLETED");
    const text = textOf(parseSse(await streaming));
    expect(text).toBe((await state(runningId)).output);

    const fresh = await submitJob(stack, "t3", { prompt: CYCLE, max_tokens: 5 });
    expect(fresh.status).toBe(202);
    expect(await allFinal([(await fresh.json()).job_id], 60_000)).toEqual(["COMPLETED"]);
  });

  it("poison commands go to the DLQ and do not block their partition", async () => {
    const kafka = new Kafka({
      clientId: "poison",
      brokers: stack.env.KAFKA_BROKERS!.split(","),
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer({ idempotent: false });
    await producer.connect();
    await producer.send({
      topic: TOPICS.requests.name,
      acks: -1,
      messages: [
        { key: "t4", value: "{not json" },
        { key: "t4", value: JSON.stringify({ job_id: "not-a-uuid", tenant_id: "t4" }) },
      ],
    });
    await producer.disconnect();
    const failing = (
      await (await submitJob(stack, "t4", { prompt: "anything", model_name: "always-fails", max_tokens: 5 })).json()
    ).job_id;
    const after = (await (await submitJob(stack, "t4", { prompt: CYCLE, max_tokens: 5 })).json()).job_id;
    const [failed, completed] = await allFinal([failing, after], 120_000);
    expect([failed, completed]).toEqual(["FAILED", "COMPLETED"]);
    expect((await state(failing)).error).toContain("the model failed");

    const dlq = await readTopic(
      stack.env.KAFKA_BROKERS!,
      TOPICS.dlq.name,
      (m) => m.length >= 3 && m.some((x) => x.value?.toString().includes(failing)),
      60_000,
    );
    const reasons = dlq.map((m) => m.headers?.reason?.toString() ?? "");
    expect(dlq.some((m) => m.value?.toString() === "{not json" && m.headers?.reason?.toString() === "not JSON")).toBe(
      true,
    );
    expect(reasons.some((r) => r.includes("job_id"))).toBe(true);
    expect(dlq.some((m) => m.value?.toString().includes(failing))).toBe(true);
  });

  it("a burst of 5,000 submissions against one slow worker: every request answered, all COMPLETED, none lost or doubled", async () => {
    // One worker left, consuming one partition at a time.
    for (const worker of stack.workers.slice(1)) await worker.stop();
    const ids: string[] = [];
    const failures: string[] = [];
    let next = 0;
    const client = async () => {
      while (next < 5000) {
        const n = next++;
        try {
          const response = await submitJob(stack, TENANTS[n % TENANTS.length], { prompt: `burst ${n}`, max_tokens: 1 });
          if (response.status === 202) ids.push((await response.json()).job_id);
          else failures.push(`${response.status}`);
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    await Promise.all(Array.from({ length: 50 }, client));
    expect(failures).toEqual([]);
    expect(new Set(ids).size).toBe(5000);
    const statuses = await allFinal(ids, 600_000);
    expect(statuses.filter((s) => s !== "COMPLETED")).toEqual([]);
    const events = await completedEventsFor(ids);
    expect(notOnceEach(events, ids)).toEqual([]);
  }, 900_000);
});
