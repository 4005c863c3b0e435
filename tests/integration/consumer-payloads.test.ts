import { randomUUID } from "node:crypto";
import Redis from "ioredis";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { parseConfig } from "@/lib/config";
import { consumeInParallel } from "@/lib/consume/parallel-consumer";
import { createKafka, createProducer } from "@/lib/kafka";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { inProcessWorker, waitFor } from "../helpers";

/**
 * The consumer kit parses every message with its topic's schema before a handler sees it: on a
 * topic of this file's own (a broker of its own), the real Redis, the kit in this process.
 */
const TOPIC = { name: "payload-test", partitions: 1 };
const SKIP_TOPIC = { name: "payload-skip-test", partitions: 1 };
/** A transform, so a test can tell the parsed payload from the raw JSON. */
const schema = z.object({ n: z.number() }).transform(({ n }) => ({ n, doubled: n * 2 }));
/** The kit one message at a time, with that schema: what every test here runs. */
const oneAtATime = { name: "payloads", concurrency: 1, maxBuffered: 100, perKeyLimit: 1, schema };

let broker: MockBroker;
let redis: Redis;
let producer: Producer;

beforeAll(async () => {
  broker = await startMockBroker({ topics: [TOPIC, SKIP_TOPIC] });
  redis = new Redis(inject("redisUrl"));
  producer = createProducer(createKafka([broker.bootstrap], "payload-test"));
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect().catch(() => {});
  redis?.disconnect();
  await broker?.stop();
});

describe("consumeInParallel({ schema, onInvalid, work })", () => {
  it("hands work the parsed payload and onInvalid what does not parse, with why; both settle, a throw is tried again", async () => {
    const ctx = testWorker("payload");
    const groupId = `payload-test-${randomUUID()}`;
    const worked: unknown[] = [];
    const invalid: { value: string | undefined; reason: string }[] = [];
    let refusals = 1;
    const consumer = await consumeInParallel(ctx, {
      ...oneAtATime,
      groupId,
      topic: TOPIC.name,
      async onInvalid(message, reason) {
        // The first one fails as a refused DLQ write would: it must come again, not be settled.
        if (refusals-- > 0) throw new Error("dead-letter write refused");
        invalid.push({ value: message.value?.toString(), reason });
      },
      async work(payload) {
        worked.push(payload);
        return "settled";
      },
    });
    try {
      await producer.send({
        topic: TOPIC.name,
        acks: -1,
        messages: ["{not json", '{"n":"one"}', '{"n":1}', '{"n":2}'].map((value) => ({ key: "k", value })),
      });
      await waitFor(() => worked.length === 2 && invalid.length === 2, {
        timeoutMs: 30_000,
        what: "every message handled",
      });
      expect(worked).toEqual([
        { n: 1, doubled: 2 },
        { n: 2, doubled: 4 },
      ]);
      expect(invalid).toEqual([
        { value: "{not json", reason: "not JSON" },
        { value: '{"n":"one"}', reason: expect.stringMatching(/^n: /) },
      ]);
      await expectCommitted(groupId, TOPIC.name, "4");
    } finally {
      await consumer.stop(0);
    }
  });

  it("settles what skip says is of no use unparsed: neither work nor onInvalid sees it, and the offset moves past it", async () => {
    const ctx = testWorker("skip");
    const groupId = `payload-skip-${randomUUID()}`;
    const worked: unknown[] = [];
    const invalid: string[] = [];
    const consumer = await consumeInParallel(ctx, {
      ...oneAtATime,
      groupId,
      topic: SKIP_TOPIC.name,
      skip: (message) => message.key?.toString() === "quiet",
      async onInvalid(message) {
        invalid.push(String(message.value));
      },
      async work(payload) {
        worked.push(payload);
        return "settled";
      },
    });
    try {
      await producer.send({
        topic: SKIP_TOPIC.name,
        acks: -1,
        messages: [
          { key: "quiet", value: '{"n":1}' },
          { key: "quiet", value: "{not json" },
          { key: "busy", value: '{"n":3}' },
          { key: "busy", value: "{not json either" },
        ],
      });
      await expectCommitted(groupId, SKIP_TOPIC.name, "4");
      expect(worked).toEqual([{ n: 3, doubled: 6 }]);
      expect(invalid).toEqual(["{not json either"]);
    } finally {
      await consumer.stop(0);
    }
  });
});

/** A worker context in this process, on this file's broker and the real Redis. */
function testWorker(name: string) {
  const config = parseConfig({
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: broker.bootstrap,
    KAFKA_EMBEDDED: "true",
    API_KEYS: "payload:payload-key-0123456789abcdef",
  });
  return inProcessWorker({ config, redis, producer, log: () => {} }, `${name}-${randomUUID().slice(0, 6)}`);
}

/** Waits until `groupId` has committed `offset` on `topic`'s partition. */
async function expectCommitted(groupId: string, topic: string, offset: string) {
  const admin = createKafka([broker.bootstrap], "payload-test-admin").admin();
  await admin.connect();
  try {
    await waitFor(
      async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions[0].offset === offset,
      { what: `the offset committed up to ${offset}` },
    );
  } finally {
    await admin.disconnect();
  }
}
