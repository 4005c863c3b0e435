import { randomBytes, randomUUID } from "node:crypto";
import type { Producer, ProducerRecord } from "kafkajs";
import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { submitJob } from "@/lib/jobs/submit-job";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { submitPublication } from "@/lib/reels/submit-publication";
import { TOPICS } from "@/lib/topics";
import { realRedisPerFile } from "./real-redis";

/**
 * lib/accept: jobs and reels accept work the same way. Each case runs against both features on a
 * real Redis, with a producer whose acknowledgements the test holds back or refuses.
 */
const redis = realRedisPerFile();
const ACME = { tenantId: "acme", accountId: "17841400000000101", accessToken: "acme-token" };
let accounts: ConnectedAccounts | undefined;
/** The account seeded over the real Redis, as REEL_ACCOUNTS seeds it in production. */
const connected = () => (accounts ??= new ConnectedAccounts(redis(), randomBytes(32), [ACME]));
const models = [
  {
    id: "local-ngram",
    provider: "local" as const,
    version: "1",
    description: "",
    price: { input_per_million: 0, output_per_million: 0 },
  },
];

/** A producer that records each produce request and answers as `ack` says. */
function fakeProducer() {
  const requests: ProducerRecord[] = [];
  const control = { ack: async (): Promise<void> => {} };
  const producer = {
    send: async (record: ProducerRecord) => {
      requests.push(record);
      await control.ack();
    },
  } as unknown as Producer;
  return { requests, control, producer: async () => producer };
}

type Producing = ReturnType<typeof fakeProducer>;
interface Feature {
  name: string;
  topic: string;
  newKey: () => string;
  /** Submits `body` under `key`, with the tenant's budget when given: { created, id }. */
  submit: (
    p: Producing,
    key: string,
    body: string,
    submitsPerMinute?: number,
  ) => Promise<{ created: boolean; id: string }>;
  /** A submission the feature refuses before its claim (an unknown model, an unknown account). */
  refused: (p: Producing, submitsPerMinute: number) => Promise<unknown>;
}

const features: Feature[] = [
  {
    name: "jobs (job_id)",
    topic: TOPICS.requests.name,
    newKey: () => randomUUID(),
    submit: async (p, key, body, submitsPerMinute) => {
      const { created, job } = await submitJob(
        { redis: redis(), producer: p.producer, models, submitsPerMinute },
        "acme",
        { tenant_id: "acme", model_name: "local-ngram", prompt: body, job_id: key, temperature: 0.2, max_tokens: 8 },
      );
      return { created, id: job.job_id };
    },
    refused: (p, submitsPerMinute) =>
      submitJob({ redis: redis(), producer: p.producer, models, submitsPerMinute }, "acme", {
        tenant_id: "acme",
        model_name: "no-such-model",
        prompt: "refused",
        temperature: 0.2,
        max_tokens: 8,
      }),
  },
  {
    name: "reels (Idempotency-Key)",
    topic: TOPICS.reels.name,
    newKey: () => `order-${randomUUID()}`,
    submit: async (p, key, body, submitsPerMinute) => {
      const input = publicationInputSchema.parse({
        account_id: ACME.accountId,
        video_url: "https://videos.test/a.mp4",
        caption: body,
      });
      const { created, publication } = await submitPublication(
        { redis: redis(), producer: p.producer, connected: connected(), submitsPerMinute },
        "acme",
        input,
        { idempotencyKey: key },
      );
      return { created, id: publication.publication_id };
    },
    refused: (p, submitsPerMinute) =>
      submitPublication(
        { redis: redis(), producer: p.producer, connected: connected(), submitsPerMinute },
        "acme",
        publicationInputSchema.parse({
          account_id: "17841400000000999",
          video_url: "https://videos.test/a.mp4",
          caption: "refused",
        }),
      ),
  },
];

const apiError = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ApiError,
  );

describe.each(features)("accepting work: $name", (feature) => {
  it("answers the same key and body again with the work, and 409 for another body; one produce", async () => {
    const p = fakeProducer();
    const key = feature.newKey();
    const first = await feature.submit(p, key, "once");
    const again = await feature.submit(p, key, "once");
    expect([first.created, again.created, again.id]).toEqual([true, false, first.id]);
    const other = await apiError(feature.submit(p, key, "twice"));
    expect([other?.status, other?.message]).toEqual([
      409,
      expect.stringMatching(/already used by a different request/),
    ]);
    expect(p.requests).toHaveLength(1);
  });

  it("answers 409 'still being accepted' while the first request waits for the broker, and that one then succeeds", async () => {
    const p = fakeProducer();
    let acknowledge!: () => void;
    p.control.ack = () => new Promise<void>((resolve) => (acknowledge = resolve));
    const key = feature.newKey();
    const first = feature.submit(p, key, "slow");
    await expect.poll(() => p.requests.length).toBe(1);
    const meanwhile = await apiError(feature.submit(p, key, "slow"));
    expect([meanwhile?.status, meanwhile?.message]).toEqual([
      409,
      expect.stringMatching(/still being accepted; try again shortly/),
    ]);
    acknowledge();
    expect((await first).created).toBe(true);
    expect((await feature.submit(p, key, "slow")).created).toBe(false);
  });

  it("takes the claim back when the broker refuses, so the same key works once it is back", async () => {
    const p = fakeProducer();
    p.control.ack = async () => {
      throw new Error("broker down");
    };
    const key = feature.newKey();
    const refused = await apiError(feature.submit(p, key, "retry me"));
    expect([refused?.status, refused?.headers["Retry-After"]]).toEqual([503, "2"]);
    p.control.ack = async () => {};
    expect((await feature.submit(p, key, "retry me")).created).toBe(true);
  });

  it("takes the tenant's budget in the claim: over it a 429 that claims and produces nothing; a submission refused before its claim takes none", async () => {
    await redis().del("ratelimit:submit:acme");
    const p = fakeProducer();
    // Two a minute: a burst of two, then one every 30 s.
    expect((await apiError(feature.refused(p, 2)))?.status).toBeGreaterThanOrEqual(400);
    expect((await feature.submit(p, feature.newKey(), "one", 2)).created).toBe(true);
    expect((await feature.submit(p, feature.newKey(), "two", 2)).created).toBe(true);
    const key = feature.newKey();
    const over = await apiError(feature.submit(p, key, "three", 2));
    expect([over?.status, over?.headers["Retry-After"], over?.message]).toEqual([
      429,
      "30",
      "Too many submit requests for this tenant: at most 2 a minute. Try again in 30 s.",
    ]);
    expect(p.requests).toHaveLength(2);
    // Nothing was claimed: with budget again, the same key makes new work.
    await redis().del("ratelimit:submit:acme");
    expect((await feature.submit(p, key, "three", 2)).created).toBe(true);
  });

  it("sends the submissions of one turn of the event loop in one produce request, acks -1", async () => {
    const p = fakeProducer();
    const results = await Promise.all([1, 2, 3].map((n) => feature.submit(p, feature.newKey(), `burst ${n}`)));
    expect(results.every((r) => r.created)).toBe(true);
    // One request unless the claims' answers came back in different turns; one each was the old way.
    expect(p.requests.length).toBeLessThan(3);
    expect(p.requests.every((r) => r.topic === feature.topic && r.acks === -1)).toBe(true);
    expect(p.requests.flatMap((r) => r.messages)).toHaveLength(3);
  });
});
