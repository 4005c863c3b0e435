import type { Consumer, EachMessagePayload } from "kafkajs";
import type { Log } from "./log";
import { abortableSleep } from "./sleep";

/** How a background run ended: settled (commit the offset) or handed back (deliver it again). */
export type RunOutcome = "settled" | "handed-back";

/**
 * Runs long work for a Kafka message without holding back other partitions. kafkajs fetches again
 * only once every batch of its last fetch is handled, so work done inside eachMessage (a
 * generation, a publication polling for minutes) would stall every partition of the worker. Here
 * the handler pauses the message's partition, starts the work in the background and returns; when
 * the work settles the offset is committed and the partition resumed. One run at a time per
 * partition keeps a key's messages in order. Work handed back is fetched again (unless stopping),
 * and a worker that dies leaves the offset uncommitted for the partition's next owner.
 */
export class PartitionRunner {
  private readonly inFlight = new Map<string, Promise<RunOutcome>>();
  private stopping = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly log: Log,
    /** Runs at once at most (WORKER_CONCURRENCY); a message waits in its handler for a free slot. */
    private readonly limit = Infinity,
  ) {}

  get running(): number {
    return this.inFlight.size;
  }

  /** Pauses the partition and runs `work` for `id`; a redelivery of an id already running joins that run. */
  async start(payload: EachMessagePayload, id: string, work: () => Promise<RunOutcome>): Promise<void> {
    const { topic, partition, message, pause } = payload;
    while (this.inFlight.size >= this.limit && !this.inFlight.has(id)) {
      await Promise.race([...this.inFlight.values()].map((run) => run.catch(() => {})));
      await payload.heartbeat().catch(() => {});
    }
    const resume = pause();
    let run = this.inFlight.get(id);
    if (!run) {
      run = work().finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, run);
    }
    void run
      .then(async (outcome) => {
        if (outcome === "handed-back") {
          if (!this.stopping) {
            this.consumer.seek({ topic, partition, offset: message.offset });
            resume();
          }
          return;
        }
        // After a rebalance moved the partition the commit can fail; its new owner finds the work settled.
        await this.consumer
          .commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }])
          .catch((error) => this.log("warn", "could not commit an offset", { topic, partition, offset: message.offset, error: String(error) }));
        if (!this.stopping) resume();
      })
      .catch((error) => this.log("error", "a background run failed", { topic, partition, offset: message.offset, error: String(error) }));
  }

  /** Commits past a message that needs no run (a poison message already dealt with). */
  async commitPast({ topic, partition, message }: EachMessagePayload): Promise<void> {
    await this.consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
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
