import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Kafka, logLevel, type Consumer, type Producer } from "kafkajs";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { ALL_TOPICS, TOPICS } from "../../lib/topics";
import { createKafka, createWorkerConsumer } from "../../lib/kafka";

// A private broker: these tests take it down, which must not disturb the suite's shared one.
let broker: MockBroker;
let kafka: Kafka;
/** The consumers' client, configured as the worker's (see consumer()). */
let groupKafka: Kafka;
const clients: { disconnect(): Promise<void> }[] = [];
const runId = `${process.pid}-${Date.now()}`;

/**
 * How long a wait on a consumer group may take. Idle, a join or rebalance takes about 5 s (the mock
 * holds it open for sessionTimeout - 1 s); on a loaded 2-core machine a member can miss the round
 * and the group needs several more, so waits on a group allow many rounds, not one or two.
 */
const GROUP_WAIT_MS = 90_000;

/** Polls `check` until it returns a truthy value; never a fixed sleep. */
async function waitFor<T>(
  what: string | (() => string),
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}${last ? `: ${String(last)}` : ""}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function producer(): Producer {
  // The mock refuses idempotent producers (no controller); small retries so a dead broker shows within seconds.
  const p = kafka.producer({
    idempotent: false,
    allowAutoTopicCreation: false,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
  });
  clients.push(p);
  return p;
}

/**
 * A group member as a worker makes one (lib/kafka.ts): a 6 s session, 500 ms heartbeats, retries
 * without end, on a client whose requests may wait 30 s. The mock holds a rebalance open for
 * sessionTimeout - 1 s; a JoinGroup or SyncGroup timed out sooner (this file's client allows 2 s)
 * makes the member rejoin as a new one, again and again, which a busy machine turned into 90 s
 * without two stable assignments. The fetch wait is 500 ms so the test's idle members poll less.
 */
function consumer(groupId: string): Consumer {
  const c = createWorkerConsumer(groupKafka, groupId, 500);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  broker = await startMockBroker();
  kafka = new Kafka({
    clientId: "kafka-mock-test",
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 2000,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
  });
  groupKafka = createKafka([broker.bootstrap], "kafka-mock-test-group", { requestTimeout: 30_000 });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.disconnect()));
  await broker?.stop();
});

describe("embedded Kafka mock broker", () => {
  it("serves every declared topic with its partition count", async () => {
    expect(broker.bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
    const admin = kafka.admin();
    clients.push(admin);
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: ALL_TOPICS.map((t) => t.name) });
    expect(Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]))).toEqual(
      Object.fromEntries(ALL_TOPICS.map((t) => [t.name, t.partitions])),
    );
    // No controller: topics cannot be created through the admin API, which is why the broker program makes them.
    await expect(admin.createTopics({ topics: [{ topic: `extra-${runId}`, numPartitions: 1 }] })).rejects.toThrow();
  });

  it(
    "delivers produced messages with their keys to a consumer group",
    { timeout: GROUP_WAIT_MS + 10_000 },
    async () => {
      const topic = TOPICS.completed.name;
      const sent = Array.from({ length: 12 }, (_, i) => ({ key: `job-${i}`, value: `${runId}:${i}` }));
      const received = new Map<string, string>();
      const c = consumer(`kafka-mock-test-keys-${runId}`);
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await c.run({
        eachMessage: async ({ message }) => {
          const value = message.value?.toString() ?? "";
          if (value.startsWith(`${runId}:`)) received.set(value, message.key?.toString() ?? "");
        },
      });

      const p = producer();
      await p.connect();
      await p.send({ topic, acks: -1, messages: sent });

      await waitFor("all messages consumed", () => received.size === sent.length, GROUP_WAIT_MS);
      expect(Object.fromEntries(received)).toEqual(Object.fromEntries(sent.map((m) => [m.value, m.key])));
    },
  );

  it(
    "splits the partitions of ai.generation.requests between two consumers of one group, a member whose SyncGroup is refused joining again",
    async () => {
      const topic = TOPICS.requests.name;
      const groupId = `kafka-mock-test-split-${runId}`;
      const assignments = new Map<string, number[]>();
      // What each member went through, printed if the wait fails: joins, rebalances, crashes.
      const history: string[] = [];
      const start = async (name: string) => {
        const c = consumer(groupId);
        const note = (what: string) => history.push(`${new Date().toISOString()} ${name} ${what}`);
        c.on(c.events.GROUP_JOIN, (event) => {
          assignments.set(name, event.payload.memberAssignment[topic] ?? []);
          note(`joined with [${assignments.get(name)!.join(",")}]`);
        });
        c.on(c.events.REBALANCING, () => note("rebalancing"));
        c.on(c.events.CRASH, (event) => {
          note(`crashed: ${String(event.payload.error)}${event.payload.restart ? " (kafkajs restarts it)" : ""}`);
          // The mock sometimes answers a SyncGroup with a protocol error, after which kafkajs does
          // not restart the consumer; a worker then joins again with a new one (parallel-consumer.ts
          // `replace`), and so does this member.
          if (event.payload.restart) return;
          void c.disconnect().catch(() => {});
          void start(name).catch((error) => note(`could not start again: ${String(error)}`));
        });
        await c.connect();
        await c.subscribe({ topic });
        await c.run({ eachMessage: async () => {} });
      };
      await start("a");
      await waitFor(
        "first member to join",
        () => assignments.get("a")?.length === TOPICS.requests.partitions,
        GROUP_WAIT_MS,
      );
      // The mock's quirk, on purpose: the next SyncGroup (the rebalance b's join starts) is refused
      // with a protocol error kafkajs does not retry; the member it hits joins again with a new consumer.
      await broker.pushErrors(14 /* SyncGroup */, 1, 42 /* INVALID_REQUEST */);
      await start("b");

      const [a, b] = await waitFor(
        () => `two disjoint assignments covering every partition; the members' history:\n${history.join("\n")}`,
        () => {
          const a = assignments.get("a") ?? [];
          const b = assignments.get("b") ?? [];
          const union = new Set([...a, ...b]);
          return a.length > 0 &&
            b.length > 0 &&
            union.size === a.length + b.length &&
            union.size === TOPICS.requests.partitions
            ? [a, b]
            : null;
        },
        GROUP_WAIT_MS,
      );
      expect([...a, ...b].sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(history.some((line) => line.includes("crashed"))).toBe(true);
    },
    2 * GROUP_WAIT_MS + 10_000,
  );

  it("injects latency and protocol errors", async () => {
    const topic = TOPICS.dlq.name;
    const p = producer();
    await p.connect();
    await p.send({ topic, acks: -1, messages: [{ value: "warm-up" }] });

    await broker.rtt(300);
    const slowStart = Date.now();
    await p.send({ topic, acks: -1, messages: [{ value: "slow" }] });
    expect(Date.now() - slowStart).toBeGreaterThanOrEqual(250);
    await broker.rtt(0);

    await broker.pushErrors(0 /* Produce */, 1, 87 /* INVALID_RECORD, not retriable */);
    await expect(p.send({ topic, acks: -1, messages: [{ value: "rejected" }] })).rejects.toThrow(/validation/);
    await p.send({ topic, acks: -1, messages: [{ value: "accepted" }] });

    await expect(broker.rtt(0, 99)).rejects.toThrow(/not available/i);
  });

  it("fails sends within seconds while down and recovers on the same address after up", async () => {
    const topic = TOPICS.requests.name;
    const p = producer();
    await p.connect();
    const send = (value: string) => p.send({ topic, acks: -1, messages: [{ key: "k", value }] });
    await send("before");

    await broker.down();
    try {
      const started = Date.now();
      await expect(send("while-down")).rejects.toThrow();
      const failedAfterMs = Date.now() - started;
      console.info(`kafka-mock: send failed ${failedAfterMs} ms after the broker went down`);
      expect(failedAfterMs).toBeLessThan(5000);
    } finally {
      await broker.up();
    }

    // Same producer, same bootstrap address: kafkajs reconnects by itself.
    await waitFor("a send to succeed after up", () => send("after").then(() => true), 15_000);
  });
});
