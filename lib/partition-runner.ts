import type { Consumer, EachBatchPayload, KafkaMessage } from "kafkajs";
import { createWorkerConsumer } from "./kafka";
import type { Log } from "./log";
import { abortableSleep } from "./sleep";
import type { WorkerContext } from "./worker-context";

/** How a message's work ended: settled (commit past it) or handed back (deliver it again). */
export type RunOutcome = "settled" | "handed-back";

/**
 * Works through Kafka batches without holding back other partitions. kafkajs fetches again only
 * once every batch of its last fetch is handled, so long work done inside the handler (a
 * generation, a publication polling for minutes) would stall every partition of the worker. Here
 * the handler pauses the batch's partition and returns; the batch's messages are worked through in
 * the background one at a time (which keeps a key's messages in order), each offset committed as
 * its work settles, and the partition is resumed after the last. Work handed back is fetched again
 * (unless stopping), and a worker that dies leaves the rest uncommitted for the partition's next owner.
 */
export class PartitionRunner {
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly log: Log,
    /** Partitions worked at once at most (WORKER_CONCURRENCY); a batch waits in its handler for a free slot. */
    private readonly limit = Infinity,
  ) {}

  get running(): number {
    return this.inFlight.size;
  }

  async startBatch({ batch, pause, heartbeat }: EachBatchPayload, work: (message: KafkaMessage) => Promise<RunOutcome>): Promise<void> {
    const { topic, partition } = batch;
    const key = `${topic}:${partition}`;
    const resume = pause();
    // The partition came back (a rebalance) while its last batch is still being worked: that run resumes it.
    if (this.inFlight.has(key) || batch.messages.length === 0) {
      if (!this.inFlight.has(key)) resume();
      return;
    }
    while (this.inFlight.size >= this.limit) {
      await Promise.race(this.inFlight.values());
      await heartbeat().catch(() => {});
    }
    const run = this.work(topic, partition, batch.messages, work, resume)
      .catch((error) => this.log("error", "a background run failed", { topic, partition, error: String(error) }))
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, run);
  }

  private async work(topic: string, partition: number, messages: KafkaMessage[], work: (message: KafkaMessage) => Promise<RunOutcome>, resume: () => void) {
    for (const message of messages) {
      if (this.stopping) return;
      if ((await work(message)) === "handed-back") {
        if (this.stopping) return;
        this.consumer.seek({ topic, partition, offset: message.offset });
        resume();
        return;
      }
      // After a rebalance moved the partition the commit can fail; its new owner finds the work settled.
      await this.consumer
        .commitOffsets([{ topic, partition, offset: next(message) }])
        .catch((error) => this.log("warn", "could not commit an offset", { topic, partition, offset: message.offset, error: String(error) }));
    }
    if (this.stopping) return;
    this.consumer.seek({ topic, partition, offset: next(messages[messages.length - 1]) });
    resume();
  }

  /** Takes no new work, lets runs settle for `graceMs`, then calls `abort` and waits for the rest. */
  async drain(graceMs: number, abort: () => void): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + graceMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }
}

const next = (message: KafkaMessage) => (BigInt(message.offset) + 1n).toString();

/**
 * Runs `attempt` until it settles or is handed back. A failure of the infrastructure (Redis or the
 * broker away) is tried again with backoff, so the offset is never committed for unfinished work.
 */
export async function retryUntilSettled(attempt: () => Promise<RunOutcome>, opts: { log: Log; shutdown: AbortSignal; what: Record<string, string> }): Promise<RunOutcome> {
  for (let failures = 0; ; failures++) {
    try {
      return await attempt();
    } catch (error) {
      opts.log("error", "run failed; trying again", { ...opts.what, error: error instanceof Error ? error.message : String(error) });
      const stopped = await abortableSleep(Math.min(30_000, 500 * 2 ** failures), opts.shutdown).then(
        () => false,
        () => true,
      );
      if (stopped) return "handed-back";
    }
  }
}

/**
 * Joins `groupId` on `topic` and works every message with `work`, in the background of its paused
 * partition, at most WORKER_CONCURRENCY partitions at once. The partitions held are reported to
 * the worker's presence under `name`. `stop` takes no new work, lets runs settle for `graceMs`,
 * calls `abort` for the rest (handed back uncommitted) and leaves the group.
 */
export async function consumeInBackground(
  ctx: WorkerContext,
  opts: {
    name: string;
    groupId: string;
    topic: string;
    work: (message: KafkaMessage, batch: { partition: number; heartbeat: () => Promise<void> }) => Promise<RunOutcome>;
  },
): Promise<{ stop(graceMs: number, abort: () => void): Promise<void> }> {
  let stopping = false;
  let current: { consumer: Consumer; runner: PartitionRunner };

  async function start(): Promise<void> {
    const consumer = createWorkerConsumer(ctx.kafka, opts.groupId);
    const runner = new PartitionRunner(consumer, ctx.log, ctx.config.WORKER_CONCURRENCY);
    current = { consumer, runner };
    consumer.on(consumer.events.GROUP_JOIN, (event) => ctx.presence.setAssignment(opts.name, event.payload.memberAssignment[opts.topic] ?? []));
    // kafkajs restarts a crashed consumer only after retriable errors; the mock broker sometimes
    // answers a SyncGroup with a protocol error, which left the worker out of its group for good.
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart || stopping) return;
      ctx.log("error", "consumer crashed and kafkajs will not restart it; starting a new one", { group: opts.groupId, error: String(event.payload.error) });
      ctx.presence.setAssignment(opts.name, []);
      setTimeout(() => {
        if (stopping) return;
        void consumer
          .disconnect()
          .catch(() => {})
          .then(start)
          .catch((error) => ctx.log("error", "could not start the consumer again", { group: opts.groupId, error: String(error) }));
      }, 1000);
    });
    await consumer.connect();
    await consumer.subscribe({ topic: opts.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: ctx.config.WORKER_CONCURRENCY,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => runner.startBatch(payload, (message) => opts.work(message, { partition: payload.batch.partition, heartbeat: payload.heartbeat })),
    });
  }

  await start();
  return {
    async stop(graceMs, abort) {
      stopping = true;
      const { consumer, runner } = current;
      // pause() throws while the consumer is still joining its group; leaving must happen anyway.
      try {
        consumer.pause([{ topic: opts.topic }]);
      } catch {
        // nothing fetched yet, nothing to pause
      }
      await runner.drain(graceMs, abort);
      await consumer.disconnect();
    },
  };
}
