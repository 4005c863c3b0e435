import { rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import Redis from "ioredis";
import { jobKeys } from "@/lib/jobs/keys";
import { parseJobRecord, type JobRecord } from "@/lib/jobs/job-record";
import { isFinalJob } from "@/lib/jobs/status";
import { WORKERS_KEY } from "@/lib/live-workers";
import { bucketOf, percentile } from "@/lib/usage/histogram";
import { readUsage } from "@/lib/usage/read-usage";
import { usageField } from "@/lib/usage/usage-facts";
import { usageKeys } from "@/lib/usage/usage-keys";
import { mergeAll, type UsagePage } from "@/lib/usage/usage-report";
import { startMockBroker } from "../../scripts/lib/kafka-mock";
import {
  closeWebServices,
  expectProblem,
  ROOT,
  spawnWorker,
  stopWorker,
  waitFor,
  type WorkerProcess,
} from "../helpers";

/**
 * Usage aggregates on the real stack: real worker processes finish a burst of mixed jobs (completed,
 * failed by a model server that refuses them, cancelled queued and running) while one worker is
 * killed mid-run; the aggregates must equal a recount from the job records. Then GET /v1/usage's
 * validation, tenancy and CSV, and the rebuild from the audit topic.
 */
const TENANTS = ["usage-a", "usage-b"];
const key = (tenant: string) => `${tenant}-key-0123456789abcdef`;
const PRICE = { input_per_million: 0.15, output_per_million: 0.6 };
const CYCLE = "one two three four five six seven eight nine ten ".repeat(3).trim();
const startedAt = Date.now();
/** The workers' audit archive, as npm start gives them with the embedded broker. */
const ARCHIVE_DIR = path.join(ROOT, ".test-data/usage-audit");
let refuser: http.Server;
let env: Record<string, string>;
let redis: Redis;
const workers: WorkerProcess[] = [];
const jobIds: string[] = [];
let routes: {
  jobs: typeof import("@/app/v1/jobs/route");
  cancel: typeof import("@/app/jobs/[id]/cancel/route");
  usage: typeof import("@/app/v1/usage/route");
};

/** An OpenAI-compatible server that refuses every request with a 400: its jobs end FAILED at once. */
async function refusingModelServer(): Promise<string> {
  refuser = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ error: { message: "refused", type: "invalid_request_error", param: null, code: null } }),
      );
    });
  });
  await new Promise<void>((resolve) => refuser.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(refuser.address() as AddressInfo).port}/v1`;
}

beforeAll(async () => {
  env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: TENANTS.map((t) => `${t}:${key(t)}`).join(","),
    LOCAL_MODEL_TOKENS_PER_SECOND: "40",
    WORKER_CONCURRENCY: "6",
    LLM_BASE_URL: await refusingModelServer(),
    LLM_MODELS: "refuser",
    MODEL_PRICES: JSON.stringify({ "local-ngram": PRICE }),
    AUDIT_ARCHIVE_DIR: ARCHIVE_DIR,
  };
  rmSync(ARCHIVE_DIR, { recursive: true, force: true });
  Object.assign(process.env, env);
  redis = new Redis(env.REDIS_URL);
  routes = {
    jobs: await import("@/app/v1/jobs/route"),
    cancel: await import("@/app/jobs/[id]/cancel/route"),
    usage: await import("@/app/v1/usage/route"),
  };
  workers.push(spawnWorker(env, "usage-worker-a"), spawnWorker(env, "usage-worker-b"));
  await waitForPartitions(2);
});

afterAll(async () => {
  for (const worker of workers) await stopWorker(worker);
  await closeWebServices();
  redis?.disconnect();
  await new Promise((resolve) => refuser?.close(resolve));
});

/** `count` of this file's workers hold all six partitions of the requests topic between them. */
async function waitForPartitions(count: number) {
  await waitFor(
    async () => {
      const seen = Object.values(await redis.hgetall(WORKERS_KEY)).map((raw) => JSON.parse(raw));
      const held = seen.filter((w) => workers.some((x) => x.id === w.id)).map((w) => w.assignments.generation ?? []);
      return held.length === count && held.every((p) => p.length > 0) && held.flat().length === 6;
    },
    { timeoutMs: 90_000, intervalMs: 200, what: `${count} workers to share the partitions` },
  );
}

const auth = (tenant: string) => ({ authorization: `Bearer ${key(tenant)}` });

async function submit(tenant: string, body: Record<string, unknown>): Promise<string> {
  const response = await routes.jobs.POST(
    new Request("http://x/v1/jobs", {
      method: "POST",
      headers: { ...auth(tenant), "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: tenant, temperature: 0, ...body }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return (await response.json()).job_id;
}

const cancel = (tenant: string, id: string) =>
  routes.cancel.POST(new Request(`http://x/jobs/${id}/cancel`, { method: "POST", headers: auth(tenant) }), {
    params: Promise.resolve({ id }),
  });

const usage = (tenant: string, query: string, headers: Record<string, string> = auth(tenant)) =>
  routes.usage.GET(new Request(`http://x/v1/usage?${query}`, { headers }), undefined);

const RANGE = () =>
  `from=${Math.floor((startedAt - 3_600_000) / 1000)}&to=${Math.ceil((Date.now() + 3_600_000) / 1000)}&bucket=hour`;

async function records(): Promise<JobRecord[]> {
  const all = await Promise.all(jobIds.map(async (id) => parseJobRecord(await redis.hgetall(jobKeys.state(id)))));
  return all.map((record, i) => {
    if (!record) throw new Error(`job ${jobIds[i]} has no record`);
    return record;
  });
}

const hourOf = (iso: string | undefined) => Math.floor(Date.parse(iso ?? "") / 3_600_000) * 3600;
const sumBy = <T>(items: T[], of: (item: T) => number) => items.reduce((total, item) => total + of(item), 0);

/** Nearest rank, as the histograms estimate it. */
function exactPercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1];
}

/** This file's tenants' usage by model over the test's range, as GET /v1/usage answers it. */
const usagePages = () =>
  Promise.all(TENANTS.map(async (t) => (await (await usage(t, `${RANGE()}&group_by=model`)).json()) as UsagePage));

/** The pages as they are, then five jobs too many in the first hour with any: a count a rebuild must put right. */
async function miscountOneHour(): Promise<{ before: UsagePage[]; hour: number }> {
  const before = await usagePages();
  const hour = before[0].data.find((b) => b.results.length)!.start_time * 1000;
  await redis.hincrby(
    usageKeys.bucket("jobs", "usage-a", "hour", hour),
    usageField("jobs", "local-ngram", "COMPLETED"),
    5,
  );
  return { before, hour };
}

describe("usage aggregates", () => {
  it("equal a recount of the job records after a burst of mixed jobs with a worker killed mid-run", async () => {
    // Two long jobs first, so one is surely running when the kill lands.
    for (const tenant of TENANTS)
      jobIds.push(await submit(tenant, { model_name: "local-ngram", prompt: CYCLE, max_tokens: 400 }));
    const cancelled: Promise<Response>[] = [];
    for (let i = 0; i < 36; i++) {
      const tenant = TENANTS[i % 2];
      const model = i % 6 === 5 ? "refuser" : "local-ngram";
      const id = await submit(tenant, { model_name: model, prompt: `${CYCLE} ${i}`, max_tokens: 10 + ((i * 7) % 50) });
      jobIds.push(id);
      // Some cancelled at once (most still queued), some a moment later (most running).
      if (i % 6 === 1) cancelled.push(cancel(tenant, id));
      if (i % 6 === 3) cancelled.push(new Promise((r) => setTimeout(r, 300)).then(() => cancel(tenant, id)));
    }
    for (const response of await Promise.all(cancelled)) expect(response.status).toBe(200);

    const running = await waitFor(
      async () => {
        const states = await Promise.all(jobIds.slice(0, 2).map((id) => redis.hgetall(jobKeys.state(id))));
        return states.find((s) => s.status === "RUNNING" && workers.some((w) => w.id === s.worker_id));
      },
      { timeoutMs: 60_000, what: "a long job to be running" },
    );
    const victim = workers.find((w) => w.id === running.worker_id)!;
    victim.child.kill("SIGKILL");
    await victim.exited;
    workers.splice(workers.indexOf(victim), 1);
    workers.push(spawnWorker(env, "usage-worker-c"));

    // `audited` is the last thing a worker writes after a final state: by then the usage is recorded.
    await waitFor(async () => (await records()).every((r) => isFinalJob(r.status) && r.audited), {
      timeoutMs: 180_000,
      intervalMs: 250,
      what: "every job to be final and audited",
    });
    const all = await records();
    expect(new Set(all.map((r) => r.status))).toEqual(new Set(["COMPLETED", "FAILED", "CANCELLED"]));
    expect(all.find((r) => r.job_id === running.job_id)!.attempts).toBeGreaterThanOrEqual(2);
    expect(all.every((r) => r.usage_counted)).toBe(true);

    for (const tenant of TENANTS) {
      const mine = all.filter((r) => r.tenant_id === tenant);
      const byStatus = (await (await usage(tenant, `${RANGE()}&group_by=status`)).json()) as UsagePage;
      // Every hour and status: the same count as the records, so no job is counted twice or missed.
      const counted = byStatus.data.flatMap((b) =>
        b.results.map((r) => r.object === "usage.jobs.result" && `${b.start_time} ${r.status} ${r.jobs}`),
      );
      const recounted = new Map<string, number>();
      for (const r of mine) {
        const cell = `${hourOf(r.completed_at)} ${r.status}`;
        recounted.set(cell, (recounted.get(cell) ?? 0) + 1);
      }
      expect(counted.sort()).toEqual([...recounted].map(([cell, n]) => `${cell} ${n}`).sort());

      const byModel = (await (await usage(tenant, `${RANGE()}&group_by=model`)).json()) as UsagePage;
      for (const model of ["local-ngram", "refuser"]) {
        const results = byModel.data.flatMap((b) =>
          b.results.flatMap((r) => (r.object === "usage.jobs.result" && r.model === model ? [r] : [])),
        );
        const jobs = mine.filter((r) => r.model_name === model);
        expect(
          sumBy(results, (r) => r.jobs),
          model,
        ).toBe(jobs.length);
        expect(
          sumBy(results, (r) => r.input_tokens),
          model,
        ).toBe(sumBy(jobs, (r) => r.usage?.prompt_tokens ?? 0));
        expect(
          sumBy(results, (r) => r.output_tokens),
          model,
        ).toBe(sumBy(jobs, (r) => r.usage?.completion_tokens ?? 0));
        const cost = sumBy(jobs, (r) => r.cost?.amount ?? 0);
        expect(Math.round(sumBy(results, (r) => r.cost.amount) * 100), `${model} cost in cents`).toBe(
          Math.round(cost * 100),
        );
        expect(sumBy(results, (r) => r.cost.amount)).toBeCloseTo(cost, 7);
        if (model === "local-ngram") expect(cost).toBeGreaterThan(0);
      }

      const buckets = await readUsage(redis, tenant, {
        fromMs: startedAt - 3_600_000,
        toMs: Date.now() + 3_600_000,
        bucket: "hour",
      });
      const local = mine.filter((r) => r.model_name === "local-ngram");
      for (const [metric, valueOf] of [
        ["ttft", (r: JobRecord) => r.ttft_ms],
        ["tps", (r: JobRecord) => r.tokens_per_second],
      ] as const) {
        const values = local.flatMap((r) => (valueOf(r) === undefined ? [] : [valueOf(r)!]));
        const merged = mergeAll(buckets.map((b) => b[metric]["local-ngram"]));
        expect(
          merged.reduce((a, b) => a + b),
          metric,
        ).toBe(values.length);
        for (const p of [0.5, 0.95]) {
          const estimate = bucketOf(percentile(merged, p)!);
          expect(
            Math.abs(estimate - bucketOf(exactPercentile(values, p))),
            `${metric} p${p * 100}`,
          ).toBeLessThanOrEqual(1);
        }
      }
    }
  });

  it("answers GET /v1/usage for the key's tenant only, in buckets of the range", async () => {
    const response = await usage("usage-a", `${RANGE()}&group_by=model`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const page = (await response.json()) as UsagePage;
    expect(page).toMatchObject({ object: "page", bucket: "hour", group_by: "model", has_more: false, next_page: null });
    expect(page.data.length).toBeGreaterThanOrEqual(3);
    page.data.forEach((b, i) => {
      expect(b.end_time - b.start_time).toBe(3600);
      if (i > 0) expect(b.start_time).toBe(page.data[i - 1].end_time);
    });
    const a = sumBy(page.data, (b) => sumBy(b.results, (r) => (r.object === "usage.jobs.result" ? r.jobs : 0)));
    expect(a).toBe((await records()).filter((r) => r.tenant_id === "usage-a").length);

    await expectProblem(await usage("usage-a", RANGE(), {}), 401);
    const stranger = (await (await usage("usage-b", `${RANGE()}&group_by=model`)).json()) as UsagePage;
    expect(stranger.data.flatMap((b) => b.results).length).toBeGreaterThan(0);
    expect(sumBy(stranger.data, (b) => sumBy(b.results, (r) => (r.object === "usage.jobs.result" ? r.jobs : 0)))).toBe(
      (await records()).filter((r) => r.tenant_id === "usage-b").length,
    );
  });

  it.each([
    ["to before from", "from=2026-11-20&to=2026-11-19", "to", /must be after from/],
    [
      "a range too long for hours",
      `from=${Math.floor(Date.now() / 1000) - 32 * 86400}&bucket=hour`,
      "to",
      /at most 31 days/,
    ],
    [
      "a from older than hours are kept",
      `from=${Math.floor(Date.now() / 1000) - 40 * 86400}&to=${Math.floor(Date.now() / 1000) - 39 * 86400}&bucket=hour`,
      "from",
      /kept 35 days/,
    ],
    ["a time that is not one", "from=last-week", "from", /ISO 8601/],
    ["an unknown bucket", "from=2026-11-20&bucket=week", "bucket", /hour|day/],
    ["an unknown parameter", "from=2026-11-20&limit=3", "limit", /not a known field/],
  ])("refuses %s with a 422 naming the parameter", async (_, query, path, message) => {
    const problem = await expectProblem(await usage("usage-a", query), 422);
    expect(problem.errors).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it("answers a spreadsheet with format=csv: a header row and a row per bucket", async () => {
    const response = await usage("usage-a", `${RANGE()}&format=csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
    expect(response.headers.get("content-disposition")).toBe('attachment; filename="usage.csv"');
    const lines = (await response.text()).trimEnd().split("\r\n");
    expect(lines[0].split(",").slice(0, 4)).toEqual(["start_time", "end_time", "jobs", "input_tokens"]);
    const json = (await (await usage("usage-a", RANGE())).json()) as UsagePage;
    expect(lines).toHaveLength(1 + json.data.length);
    const jobs = sumBy(lines.slice(1), (line) => Number(line.split(",")[2]));
    expect(jobs).toBe((await records()).filter((r) => r.tenant_id === "usage-a").length);
  });

  it("rebuilds the same aggregates of this file's tenants from the audit archive when the broker has lost the topic", async () => {
    const { rebuildJobUsage } = await import("@/lib/usage/rebuild-usage");
    const { createKafka } = await import("@/lib/kafka");
    const { before } = await miscountOneHour();
    // A broker as the embedded one is after a restart (or past its bounded log): no audit event left.
    const emptied = await startMockBroker();
    try {
      const report = await rebuildJobUsage({
        redis,
        kafka: createKafka([emptied.bootstrap], "usage-rebuild-archive-test"),
        log: () => {},
        auditArchiveDir: ARCHIVE_DIR,
      });
      // Every job of this file is in the archive; the pages below show none counted twice, though the
      // worker killed mid-run may have archived one twice.
      expect(report.counted).toBeGreaterThanOrEqual(jobIds.length);
    } finally {
      await emptied.stop();
    }
    expect(await usagePages()).toEqual(before);
  });

  it("rebuilds the same job aggregates from the audit topic", async () => {
    const { rebuildJobUsage } = await import("@/lib/usage/rebuild-usage");
    const { createKafka } = await import("@/lib/kafka");
    // A wrong count the rebuild must replace, and a stray bucket it must remove.
    const { before, hour } = await miscountOneHour();
    await redis.hset(
      usageKeys.bucket("jobs", "usage-a", "hour", hour - 3_600_000),
      usageField("in", "local-ngram", "FAILED"),
      "3",
    );
    expect(await usagePages()).not.toEqual(before);

    const report = await rebuildJobUsage({
      redis,
      kafka: createKafka(env.KAFKA_BROKERS.split(","), "usage-rebuild-test"),
      log: () => {},
    });
    expect(report.counted).toBeGreaterThanOrEqual(jobIds.length);
    expect(report.removed).toBeGreaterThanOrEqual(1);
    expect(await usagePages()).toEqual(before);
  });
});
