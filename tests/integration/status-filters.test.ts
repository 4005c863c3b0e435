import { randomInt, randomUUID } from "node:crypto";
import type { Producer, ProducerRecord } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { parseConfig } from "@/lib/config";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { listModels } from "@/lib/jobs/list-models";
import { createProviders } from "@/lib/jobs/providers";
import { listJobs } from "@/lib/jobs/read-job";
import { runGeneration } from "@/lib/jobs/run-generation";
import type { JobStatus } from "@/lib/jobs/status";
import { submitJob } from "@/lib/jobs/submit-job";
import { decodeCursor, type IndexCursor } from "@/lib/paging";
import { createRedis, type Redis } from "@/lib/redis";
import { cancelPublication } from "@/lib/reels/cancel-publication";
import { appendEvent } from "@/lib/reels/publication-record";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { listPublications } from "@/lib/reels/read-publication";
import type { PublicationStatus } from "@/lib/reels/status";
import { submitPublication } from "@/lib/reels/submit-publication";
import { TOPICS } from "@/lib/topics";

/**
 * `?status=` lists page through an index per status (lib/status-index.ts) with the (score, id)
 * cursor: a job or publication in the status from the first page to the last comes back exactly
 * once, while others move into or out of the status between pages, through the real status writes
 * (submit, a worker's run, cancel, the publish flow's event). Real Redis; the producer records.
 */

let redis: Redis;
const sent: ProducerRecord[] = [];
const producer = { send: async (record: ProducerRecord) => void sent.push(record) } as unknown as Producer;
const config = parseConfig({
  REDIS_URL: "redis://127.0.0.1:1",
  KAFKA_BROKERS: "127.0.0.1:1",
  API_KEYS: "t:t-key-0123456789abcdef",
  LOCAL_MODEL_TOKENS_PER_SECOND: "1000",
});

beforeAll(() => {
  redis = createRedis(inject("redisUrl"));
});

afterAll(async () => {
  await redis.quit();
});

/** Every page of one listing, `between` run after each page but the last (with the ids listed so far): the ids in the order listed, and their statuses. */
async function pageThrough<T extends { status: string }>(
  list: (cursor?: IndexCursor) => Promise<{ data: T[]; next_cursor: string | null }>,
  idOf: (item: T) => string,
  between: (page: number, listed: readonly string[]) => Promise<void> = async () => {},
): Promise<{ ids: string[]; statuses: string[] }> {
  const ids: string[] = [];
  const statuses: string[] = [];
  let cursor: IndexCursor | undefined;
  for (let page = 0; ; page++) {
    const { data, next_cursor } = await list(cursor);
    ids.push(...data.map(idOf));
    statuses.push(...data.map((item) => item.status));
    if (!next_cursor) return { ids, statuses };
    cursor = decodeCursor(next_cursor);
    await between(page, ids);
  }
}

describe("GET /v1/jobs?status=", () => {
  it("pages through QUEUED without loss or repeat while jobs are cancelled and run to COMPLETED between pages", async () => {
    const tenant = `filters-${randomUUID().slice(0, 8)}`;
    const models = listModels(config);
    const ids: string[] = [];
    const commands = new Map<string, unknown>();
    // Submitted in bursts, so many share a millisecond: the cursor's ties are part of the test.
    for (let burst = 0; burst < 4; burst++) {
      const jobs = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          submitJob({ redis, producer: async () => producer, models }, tenant, {
            tenant_id: tenant,
            model_name: "local-ngram",
            prompt: `job ${burst}-${i} one two three`,
            temperature: 0,
            max_tokens: 3,
          }),
        ),
      );
      ids.push(...jobs.map(({ job }) => job.job_id));
    }
    // Submits of one turn share a produce: every message of every record.
    for (const record of sent.filter((r) => r.topic === TOPICS.requests.name))
      for (const message of record.messages) {
        const command = JSON.parse(message.value as string) as { job_id: string };
        commands.set(command.job_id, command);
      }
    const moved = new Map<string, JobStatus>();
    const worker = { redis, producer, log: () => {}, workerId: "w", models, providerFor: createProviders(config) };
    const run = async (id: string) => {
      const control = { heartbeat: async () => {}, shutdown: new AbortController().signal, runId: `run-${id}` };
      const command = commands.get(id) as Parameters<typeof runGeneration>[1];
      expect(await runGeneration({ ...worker, running: new Map() }, command, control)).toBe("finished");
      moved.set(id, "COMPLETED");
    };
    const cancel = async (id: string) => {
      await cancelJob(redis, tenant, id);
      moved.set(id, "CANCELLED");
    };
    const listed = await pageThrough(
      (cursor) => listJobs(redis, tenant, { limit: 5, cursor, status: "QUEUED" }),
      (job) => job.job_id,
      async (page, seen) => {
        // Newest first: page 0 showed the newest five. Move some already listed and some still to come.
        const unseen = ids.filter((id) => !seen.includes(id) && !moved.has(id));
        if (page === 0) {
          await cancel(unseen[0]);
          await run(unseen[unseen.length - 1]);
          await cancel(seen[0]);
        } else if (page === 1) {
          await run(unseen[1]);
          await cancel(unseen[2]);
        }
      },
    );

    expect(new Set(listed.ids).size, "no job listed twice").toBe(listed.ids.length);
    expect(listed.statuses.every((s) => s === "QUEUED")).toBe(true);
    const stayed = ids.filter((id) => !moved.has(id));
    expect(
      stayed.filter((id) => !listed.ids.includes(id)),
      "QUEUED throughout, yet not listed",
    ).toEqual([]);
    expect(moved.size).toBe(5);

    // Each final status lists exactly the jobs moved there; none is RUNNING any more; all 24 without a filter.
    for (const status of ["CANCELLED", "COMPLETED", "RUNNING"] as const) {
      const expected = [...moved].filter(([, s]) => s === status).map(([id]) => id);
      const page = await pageThrough(
        (cursor) => listJobs(redis, tenant, { limit: 2, cursor, status }),
        (job) => job.job_id,
      );
      expect(page.ids.sort(), status).toEqual(expected.sort());
    }
    const all = await pageThrough(
      (cursor) => listJobs(redis, tenant, { limit: 7, cursor }),
      (job) => job.job_id,
    );
    expect(all.ids.sort()).toEqual([...ids].sort());
  });
});

describe("GET /api/reels?status=", () => {
  it("pages through QUEUED without loss or repeat while publications are cancelled or move on between pages", async () => {
    const tenant = `filters-${randomUUID().slice(0, 8)}`;
    const accountId = `1786${randomInt(1e9, 1e10)}`;
    const connected = new ConnectedAccounts(redis, Buffer.alloc(32, 7), [
      { tenantId: tenant, accountId, accessToken: "t" },
    ]);
    const ids: string[] = [];
    for (let burst = 0; burst < 3; burst++) {
      const made = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          submitPublication(
            { redis, producer: async () => producer, connected },
            tenant,
            publicationInputSchema.parse({
              account_id: accountId,
              video_url: `https://videos.example/${burst}-${i}.mp4`,
            }),
          ),
        ),
      );
      ids.push(...made.map(({ publication }) => publication.publication_id));
    }
    const moved = new Map<string, PublicationStatus>();
    const creating = async (id: string) => {
      const step = { at: new Date().toISOString(), step: "creating", detail: "Creating the container." };
      expect(await appendEvent(redis, id, { status: "CREATING", body: { kind: "step", step } })).toBeGreaterThan(0);
      moved.set(id, "CREATING");
    };
    const cancel = async (id: string) => {
      await cancelPublication({ redis }, tenant, id);
      moved.set(id, "CANCELLED");
    };
    const listed = await pageThrough(
      (cursor) => listPublications(redis, tenant, { limit: 4, cursor, status: "QUEUED" }),
      (p) => p.publication_id,
      async (page, seen) => {
        const unseen = ids.filter((id) => !seen.includes(id) && !moved.has(id));
        if (page === 0) {
          await creating(unseen[0]);
          await cancel(unseen[unseen.length - 1]);
          await cancel(seen[0]);
        }
      },
    );

    expect(new Set(listed.ids).size).toBe(listed.ids.length);
    expect(listed.statuses.every((s) => s === "QUEUED")).toBe(true);
    expect(ids.filter((id) => !moved.has(id) && !listed.ids.includes(id))).toEqual([]);
    for (const status of ["CANCELLED", "CREATING"] as const) {
      const expected = [...moved].filter(([, s]) => s === status).map(([id]) => id);
      const page = await pageThrough(
        (cursor) => listPublications(redis, tenant, { limit: 1, cursor, status }),
        (p) => p.publication_id,
      );
      expect(page.ids.sort(), status).toEqual(expected.sort());
    }
  });
});
