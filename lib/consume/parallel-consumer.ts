import type { RedisCommand } from "../lease";
import type { Consumer, KafkaMessage } from "kafkajs";
import type { z } from "zod";
import { createWorkerConsumer } from "../kafka";
import type { Config } from "../config";
import { withTimeout } from "../with-timeout";
import type { WorkerClients } from "../worker/worker-clients";
import { KeySlots } from "./key-slots";
import { ParallelRunner } from "./parallel-runner";

/** How a message's work ended: settled (the watermark may pass it) or handed back (run it again later). */
export type RunOutcome = "settled" | "handed-back";

export interface ParallelControl {
  partition: number;
  /** Keeps the group membership; the runner also calls it every second by itself. */
  heartbeat: () => Promise<void>;
  /** Aborts when the consumer stops: hand the work back, uncommitted. */
  shutdown: AbortSignal;
  /** Names this run (worker, consumer, sequence): the owner of the work's lease and of its slot. */
  runId: string;
  /**
   * The commands that give this run's key slot back (KeySlots.handOver), for the work's last
   * write to run: a round trip less per message. Once asked for, the slot is the work's to free.
   */
  slotRelease: () => RedisCommand[];
}

export interface ParallelOptions<T> {
  /** The consumer's name in the worker's presence ("generation", "reels"). */
  name: string;
  groupId: string;
  topic: string;
  /** Messages this worker runs at once, across all its partitions (WORKER_CONCURRENCY). */
  concurrency: number;
  /** Fetched-but-unsettled messages per partition before its fetch pauses (MAX_BUFFERED_PER_PARTITION). */
  maxBuffered: number;
  /** Running messages per key across the whole cluster (TENANT_CONCURRENCY); Infinity: no cap, and no slot kept in Redis. */
  perKeyLimit: number;
  /**
   * The fetch long-poll, 50 ms by default (see createWorkerConsumer). A group whose work may wait
   * a little fetches less while idle with a longer one: every worker runs every group, and an idle
   * fetch every 50 ms is 20 requests a second per group and worker for the broker and the worker.
   */
  fetchWaitMs?: number;
  /** The ordering and fairness key; by default the message key. */
  keyOf?: (message: KafkaMessage) => string;
  /** The payload's schema (its topic's, lib/topics.ts): each message's value is parsed as JSON with it once, before `work` sees it. */
  schema: z.ZodType<T>;
  /**
   * A message whose value is not JSON or not the schema's (`reason` says which part): it is settled
   * once this returns, so it never blocks its partition. A throw is tried again with backoff.
   */
  onInvalid: (message: KafkaMessage, reason: string, control: ParallelControl) => Promise<void>;
  /** Runs one message, its payload parsed. A throw is an infrastructure failure: it is tried again with backoff. */
  work: (payload: T, message: KafkaMessage, control: ParallelControl) => Promise<RunOutcome>;
  /**
   * A message this consumer has no use for, told from its key or headers before its value is
   * parsed (a job event of a tenant known to have no webhook): settled as it starts, unparsed,
   * neither `work` nor `onInvalid` called.
   */
  skip?: (message: KafkaMessage) => boolean;
}

/** The limits every consumer of a worker runs under, as its configuration sets them. */
export function workerLimits(
  config: Pick<Config, "WORKER_CONCURRENCY" | "MAX_BUFFERED_PER_PARTITION" | "TENANT_CONCURRENCY">,
): Pick<ParallelOptions<unknown>, "concurrency" | "maxBuffered" | "perKeyLimit"> {
  return {
    concurrency: config.WORKER_CONCURRENCY,
    maxBuffered: config.MAX_BUFFERED_PER_PARTITION,
    perKeyLimit: config.TENANT_CONCURRENCY,
  };
}

export interface WindowStats {
  partition: number;
  /** Fetched and not settled (waiting or running). */
  buffered: number;
  running: number;
  /** The offset the window commits up to: its lowest unsettled one. */
  watermark: string | null;
  committed: string | null;
  paused: boolean;
}

export interface ConsumerStats {
  partitions: number[];
  running: number;
  capacity: number;
  windows: WindowStats[];
  /** Per key (tenant or account), the busiest first: running here and waiting in this worker's windows. */
  keys: { key: string; running: number; waiting: number }[];
}

export interface ParallelConsumer {
  stats(): ConsumerStats;
  /** Takes no new work, lets runs settle for `graceMs`, hands the rest back uncommitted and leaves the group. */
  stop(graceMs: number): Promise<void>;
}

/** A consumer that shows no sign of life (join, heartbeat, fetch) this long is replaced. */
const STALL_MS = 30_000;
/** How long joining the group may take before the attempt is given up and made again. */
const START_TIMEOUT_MS = 60_000;

/**
 * Joins `groupId` on `topic` and runs its messages in parallel (see ParallelRunner). A consumer
 * that crashed for good, or that stalled (kafkajs was seen to hang for good when the broker went
 * away while it was joining), is replaced by a new one, tried again with backoff until it joins;
 * the old runner hands back its work first, so two runners of one process never hold the same
 * partition, and a replaced consumer that comes back to life later leaves the group at once.
 */
export async function consumeInParallel<T>(ctx: WorkerClients, opts: ParallelOptions<T>): Promise<ParallelConsumer> {
  const supervisor = new ConsumerSupervisor(ctx, opts);
  await supervisor.start().catch(async (error) => {
    // The first join failed (the broker away at start-up): keep trying in the background.
    ctx.log("error", "could not join the consumer group; trying again", { group: opts.groupId, error });
    void supervisor.replace();
  });
  return { stats: () => supervisor.current.runner.stats(), stop: (graceMs) => supervisor.stop(graceMs) };
}

interface Incarnation<T> {
  consumer: Consumer;
  runner: ParallelRunner<T>;
  /** Replaced: if it comes back to life and joins, it leaves at once. */
  retired: boolean;
}

/** The group member of one consumeInParallel: its current consumer, and the watchdog that replaces it. */
class ConsumerSupervisor<T> {
  current!: Incarnation<T>;
  private readonly slots: KeySlots;
  private stopping = false;
  private replacing = false;
  private lastSign = Date.now();
  private readonly watchdog: ReturnType<typeof setInterval>;

  constructor(
    private readonly ctx: WorkerClients,
    private readonly opts: ParallelOptions<T>,
  ) {
    this.slots = new KeySlots(ctx.redis, opts.groupId, opts.perKeyLimit);
    this.watchdog = setInterval(() => {
      if (this.stopping || this.replacing || Date.now() - this.lastSign < STALL_MS) return;
      ctx.log("error", "consumer shows no sign of life; starting a new one", {
        group: opts.groupId,
        silentMs: Date.now() - this.lastSign,
      });
      void this.replace();
    }, 5000);
    this.watchdog.unref();
  }

  /** A new consumer and runner, made current, joined within START_TIMEOUT_MS (else retired, and the error thrown). */
  async start(): Promise<void> {
    const consumer = createWorkerConsumer(this.ctx.kafka, this.opts.groupId, this.opts.fetchWaitMs);
    const self: Incarnation<T> = {
      consumer,
      runner: new ParallelRunner(consumer, this.ctx, this.opts, this.slots),
      retired: false,
    };
    this.current = self;
    this.lastSign = Date.now();
    this.ctx.presence.track(this.opts.name, () => self.runner.stats());
    this.watch(self);
    try {
      await withTimeout(
        (async () => {
          await consumer.connect();
          await consumer.subscribe({ topic: this.opts.topic, fromBeginning: true });
          await consumer.run({
            autoCommit: false,
            eachBatchAutoResolve: false,
            eachBatch: (payload) => self.runner.takeBatch(payload),
          });
        })(),
        START_TIMEOUT_MS,
        "joining the consumer group",
      );
    } catch (error) {
      await this.retire(self);
      throw error;
    }
  }

  /** Signs of life, assignments, and a crash kafkajs will not restart, of one incarnation. */
  private watch(self: Incarnation<T>): void {
    const { consumer, runner } = self;
    const alive = () => {
      if (self === this.current) this.lastSign = Date.now();
    };
    for (const event of [consumer.events.HEARTBEAT, consumer.events.FETCH_START, consumer.events.CONNECT])
      consumer.on(event, alive);
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      // A retired consumer leaving the group: if it cannot, the group drops it when its session times out.
      if (self.retired) return void consumer.disconnect().catch(() => {});
      alive();
      runner.assign(event.payload.memberAssignment[this.opts.topic] ?? []);
      this.ctx.presence.changed();
    });
    // kafkajs restarts a crashed consumer only after retriable errors; the mock broker sometimes
    // answers a SyncGroup with a protocol error, which left the worker out of its group for good.
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart || this.stopping || self !== this.current) return;
      this.ctx.log("error", "consumer crashed and kafkajs will not restart it; starting a new one", {
        group: this.opts.groupId,
        error: event.payload.error,
      });
      void this.replace();
    });
  }

  private async retire(old: Incarnation<T>): Promise<void> {
    old.retired = true;
    old.runner.assign([]);
    this.ctx.presence.changed();
    // The old consumer is being replaced: what it cannot stop or leave cleanly, its session's timeout ends.
    await old.runner.stop(0).catch(() => {});
    await withTimeout(old.consumer.disconnect(), 10_000, "leaving the group").catch(() => {});
  }

  /** Hands the current runner's work back, leaves, and joins again with a new consumer until one joins. */
  async replace(): Promise<void> {
    if (this.replacing || this.stopping) return;
    this.replacing = true;
    try {
      await this.retire(this.current);
      for (let attempt = 0; !this.stopping; attempt++) {
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** attempt)));
        if (this.stopping) return;
        try {
          await this.start();
          this.ctx.log("info", "consumer joined again", { group: this.opts.groupId });
          return;
        } catch (error) {
          this.ctx.log("error", "could not start the consumer again; trying again", {
            group: this.opts.groupId,
            error,
          });
        }
      }
    } finally {
      this.replacing = false;
    }
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.watchdog);
    const { consumer, runner } = this.current;
    await runner.stop(graceMs);
    // Stopping: a consumer that cannot leave the group is dropped by it when its session times out.
    await withTimeout(consumer.disconnect(), 15_000, "leaving the group").catch(() => {});
  }
}
