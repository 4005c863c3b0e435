import { Kafka, logLevel, type Admin, type Consumer, type Producer, type ITopicConfig } from "kafkajs";
import { stopIdleRequestQueueLoop } from "./kafka-request-queue";
import type { Log } from "./log";
import { ALL_TOPICS } from "./topics";

// Every process that talks to Kafka imports this module: each of its kafkajs clients, ours or a
// test's, gets a request queue that sleeps while idle (see kafka-request-queue.ts).
stopIdleRequestQueueLoop();

/**
 * kafkajs tuned to fail within seconds when the broker is away, so the API can answer 503 quickly.
 * Consumers need `requestTimeout` above the group's session timeout: a SyncGroup waits for every
 * member to rejoin, and timing it out makes the consumer rejoin as a new member, again and again.
 */
export function createKafka(brokers: string[], clientId: string, options: { requestTimeout?: number } = {}): Kafka {
  const level = (process.env.KAFKAJS_LOG_LEVEL ?? "NOTHING").toUpperCase() as keyof typeof logLevel;
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel[level] ?? logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: options.requestTimeout ?? 5000,
    retry: { initialRetryTime: 100, retries: 3, maxRetryTime: 1000 },
  });
}

/**
 * A producer that waits for every in-sync replica (acks -1 on each send). It is not idempotent:
 * the embedded mock broker refuses idempotent producers; duplicates are handled by consumers keyed
 * on job_id instead.
 */
export function createProducer(kafka: Kafka): Producer {
  return kafka.producer({
    allowAutoTopicCreation: false,
    idempotent: false,
    retry: { initialRetryTime: 100, retries: 2, maxRetryTime: 800 },
  });
}

/**
 * A worker's group member: a 6 s session (the least a real broker accepts by default) so a dead
 * worker's partitions move on quickly, and
 * retries without end so it rides out a broker restart. A partition resumed after its work
 * settles is fetched again only with the next fetch, so the fetch long-poll is kept short (50 ms):
 * with a backlog in small batches (the mock broker returns one record batch per fetch) the wait
 * bounds how many jobs a partition can start per second.
 */
export function createWorkerConsumer(kafka: Kafka, groupId: string, maxWaitTimeInMs = 50): Consumer {
  return kafka.consumer({
    groupId,
    sessionTimeout: 6_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 500,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs,
    retry: { initialRetryTime: 200, retries: 1_000_000, maxRetryTime: 2000 },
  });
}

/**
 * Creates Dispatch's topics on a real cluster with infinite retention (the completed topic is the
 * audit log). The mock broker has no controller and already made them: say so once and go on.
 */
export async function ensureTopics(kafka: Kafka, log: Log): Promise<void> {
  const admin: Admin = kafka.admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const missing: ITopicConfig[] = ALL_TOPICS.filter((t) => !existing.has(t.name)).map((t) => ({
      topic: t.name,
      numPartitions: t.partitions,
      configEntries: [{ name: "retention.ms", value: "-1" }],
    }));
    if (missing.length === 0) return;
    await admin.createTopics({ topics: missing, waitForLeaders: true });
    log("info", "created Kafka topics", { topics: missing.map((t) => t.topic) });
  } catch (error) {
    log("warn", "could not create Kafka topics; the broker must already have them (the embedded mock broker does)", {
      error,
    });
  } finally {
    // The topics are checked; an admin client that cannot disconnect is dropped with its connection.
    await admin.disconnect().catch(() => {});
  }
}
