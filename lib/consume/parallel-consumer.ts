import type { Consumer, EachBatchPayload, KafkaMessage } from "kafkajs";
import type { z } from "zod";
import { createWorkerConsumer } from "../kafka";
import type { Config } from "../config";
import type { Log } from "../log";
import { recordHighWatermark } from "../metrics";
import { abortableSleep } from "../sleep";
import { withTimeout } from "../with-timeout";
import type { WorkerContext } from "../worker/worker-context";
import { FairQueue } from "./fair-queue";
import { KeySlots } from "./key-slots";
import { parsePayload } from "./parse-payload";
import { PartitionWindow, type WindowEntry } from "./partition-window";

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
  /** Running messages per key across the whole cluster (TENANT_CONCURRENCY). */
  perKeyLimit: number;
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
}

/** The limits every consumer of a worker runs under, as its configuration sets them. */
export function workerLimits(config: Pick<Config, "WORKER_CONCURRENCY" | "MAX_BUFFERED_PER_PARTITION" | "TENANT_CONCURRENCY">): Pick<ParallelOptions<unknown>, "concurrency" | "maxBuffered" | "perKeyLimit"> {
  return { concurrency: config.WORKER_CONCURRENCY, maxBuffered: config.MAX_BUFFERED_PER_PARTITION, perKeyLimit: config.TENANT_CONCURRENCY };
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

const SLOT_RETRY_MS = 200;
const HANDED_BACK_RETRY_MS = 1000;
const TICK_MS = 1000;
const KEYS_REPORTED = 50;

const messageKey = (message: KafkaMessage) => message.key?.toString("utf8") ?? "";

/**
 * Many messages of a partition at once, with Kafka's guarantees kept (docs/architecture.md):
 * - each partition's fetched messages wait in a bounded window; its fetch pauses when the window
 *   is full and resumes when it is half empty, so memory follows the windows, not the backlog;
 * - the next message to start is picked across every window one key (tenant) at a time in turn,
 *   and within a key in offset order, so a key's messages start in the order they were produced;
 * - a message starts only with a free local slot (concurrency) and a free slot of its key across
 *   the cluster (perKeyLimit, leases in Redis); a key without one waits without blocking others;
 * - a partition commits its watermark only, the lowest unsettled offset: a crash or rebalance
 *   redelivers from there, and the work (leases, final records) makes the redelivery harmless;
 * - a message is parsed once, as it starts, with its topic's schema: `work` gets the typed payload,
 *   one that does not parse goes to `onInvalid` and is settled, whatever the consumer.
 */
class ParallelRunner<T> {
  private readonly windows = new Map<number, PartitionWindow>();
  private readonly queue = new FairQueue<WindowEntry>();
  /** Runs of this runner by partition and offset, so a redelivered message follows its run instead of starting again. */
  private readonly runs = new Map<string, Promise<RunOutcome>>();
  private readonly runningPerKey = new Map<string, number>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly committing = new Set<PartitionWindow>();
  private readonly commitFailing = new Set<PartitionWindow>();
  private readonly shutdown = new AbortController();
  private readonly keyOf: (message: KafkaMessage) => string;
  private readonly timer: ReturnType<typeof setInterval>;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: () => Promise<void> = async () => {};
  private assigned: number[] = [];
  private active = 0;
  private runSeq = 0;
  private stopping = false;
  private pumping = false;
  private pumpAgain = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly ctx: { log: Log; workerId: string },
    private readonly opts: ParallelOptions<T>,
    private readonly slots: KeySlots,
  ) {
    this.keyOf = opts.keyOf ?? messageKey;
    // kafkajs heartbeats only when asked or between fetches; background work needs its own beat.
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** eachBatch: takes the batch into the partition's window and returns at once. */
  async takeBatch({ batch, resolveOffset, heartbeat, pause }: EachBatchPayload): Promise<void> {
    this.heartbeat = heartbeat;
    if (this.stopping || batch.messages.length === 0) return;
    let window = this.windows.get(batch.partition);
    if (!window) {
      window = new PartitionWindow(batch.topic, batch.partition);
      this.windows.set(batch.partition, window);
    }
    for (const entry of window.add(batch.messages, this.keyOf)) {
      const earlier = this.runs.get(runKey(entry));
      if (earlier) this.follow(entry, earlier);
      else this.queue.push(entry);
    }
    // The next fetch goes on after this batch; nothing is committed by kafkajs (autoCommit is off).
    resolveOffset(batch.messages[batch.messages.length - 1].offset);
    recordHighWatermark(this.opts.name, batch.partition, batch.highWatermark);
    // Paused again even if it was: a rebalance may have let kafkajs fetch a paused partition again.
    if (window.size >= this.opts.maxBuffered) window.resume = pause();
    this.pump();
  }

  /** GROUP_JOIN: partitions no longer ours start nothing more, drop their waiting messages and commit nothing. */
  assign(partitions: number[]): void {
    this.assigned = [...partitions].sort((a, b) => a - b);
    const kept = new Set(partitions);
    for (const [partition, window] of this.windows) {
      if (kept.has(partition)) continue;
      window.revoked = true;
      // A paused partition stays paused in kafkajs across rebalances; it must fetch if it comes back.
      window.resume?.();
      window.resume = undefined;
      this.windows.delete(partition);
    }
    const dropped = this.queue.remove((entry) => entry.window.revoked);
    if (dropped.length) this.ctx.log("info", "partitions revoked; their waiting messages go to the next owner", { consumer: this.opts.name, dropped: dropped.length });
  }

  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.startWhatFits()
      .catch((error) => this.ctx.log("error", "could not start work", { consumer: this.opts.name, error }))
      .finally(() => {
        this.pumping = false;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.pump();
        }
      });
  }

  private async startWhatFits(): Promise<void> {
    while (!this.stopping && this.active < this.opts.concurrency) {
      const now = Date.now();
      const entry = this.queue.take((key) => (this.blockedUntil.get(key) ?? 0) <= now);
      if (!entry) return;
      const runId = `${this.ctx.workerId}:${this.opts.name}:${++this.runSeq}`;
      let slot = false;
      try {
        slot = await this.slots.acquire(entry.key, runId);
      } catch (error) {
        this.ctx.log("warn", "could not take a slot; trying again", { consumer: this.opts.name, error });
      }
      if (this.stopping || entry.window.revoked) {
        // A key slot not released lapses with its lease within 10 s.
        if (slot) await this.slots.release(runId).catch(() => {});
        if (this.stopping) return;
        continue;
      }
      if (!slot) {
        // The key runs its share across the cluster: its next message waits at the head of its queue.
        this.queue.unshift(entry);
        this.blockedUntil.set(entry.key, Date.now() + SLOT_RETRY_MS);
        this.retryLater(SLOT_RETRY_MS);
        continue;
      }
      this.start(entry, runId);
    }
  }

  private start(entry: WindowEntry, runId: string): void {
    const { window } = entry;
    const message = entry.message!;
    entry.state = "running";
    this.active++;
    this.runningPerKey.set(entry.key, (this.runningPerKey.get(entry.key) ?? 0) + 1);
    const control: ParallelControl = { partition: window.partition, heartbeat: () => this.heartbeat(), shutdown: this.shutdown.signal, runId };
    const what = { consumer: this.opts.name, partition: String(window.partition), offset: message.offset };
    const payload = parsePayload(this.opts.schema, message.value);
    const attempt = payload.success
      ? () => this.opts.work(payload.data, message, control)
      : () => this.opts.onInvalid(message, payload.reason, control).then((): RunOutcome => "settled");
    const run = retryUntilSettled(attempt, { log: this.ctx.log, shutdown: this.shutdown.signal, what });
    const key = runKey(entry);
    this.runs.set(key, run);
    void run.then(async (outcome) => {
      this.runs.delete(key);
      this.active--;
      const left = (this.runningPerKey.get(entry.key) ?? 1) - 1;
      if (left > 0) this.runningPerKey.set(entry.key, left);
      else this.runningPerKey.delete(entry.key);
      this.blockedUntil.delete(entry.key);
      // A key slot not released lapses with its lease within 10 s.
      await this.slots.release(runId).catch(() => {});
      this.settle(entry, outcome);
      this.pump();
    });
  }

  /** A redelivery of a message this runner still runs (the partition came back): it settles with that run. */
  private follow(entry: WindowEntry, run: Promise<RunOutcome>): void {
    entry.state = "running";
    void run.then((outcome) => this.settle(entry, outcome));
  }

  private settle(entry: WindowEntry, outcome: RunOutcome): void {
    const { window } = entry;
    if (outcome === "handed-back") {
      if (this.stopping || window.revoked) return;
      // Handed back while the worker goes on (its lease went to another run): try it again shortly.
      entry.state = "waiting";
      setTimeout(() => {
        if (this.stopping || window.revoked) return;
        this.queue.unshift(entry);
        this.pump();
      }, HANDED_BACK_RETRY_MS).unref();
      return;
    }
    window.settle(entry);
    void this.commit(window);
    if (window.resume && window.size <= this.opts.maxBuffered / 2) {
      const resume = window.resume;
      window.resume = undefined;
      resume();
    }
  }

  /** Commits the window's watermark if it moved; one commit in flight per partition. */
  private async commit(window: PartitionWindow): Promise<void> {
    if (window.revoked || this.committing.has(window)) return;
    const offset = window.commitDue();
    if (offset === undefined) return;
    this.committing.add(window);
    try {
      await this.consumer.commitOffsets([{ topic: window.topic, partition: window.partition, offset: offset.toString() }]);
      window.committedUpTo(offset);
      this.commitFailing.delete(window);
    } catch (error) {
      // Expected around a rebalance; the tick tries again, and the next owner redelivers from the last commit.
      if (!this.commitFailing.has(window)) this.ctx.log("warn", "could not commit an offset", { consumer: this.opts.name, partition: window.partition, offset: offset.toString(), error });
      this.commitFailing.add(window);
      return;
    } finally {
      this.committing.delete(window);
    }
    if (window.commitDue() !== undefined) await this.commit(window);
  }

  private retryLater(ms: number): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, ms);
  }

  private tick(): void {
    // A missed heartbeat is sent again on the next tick, a second later; the session outlives several.
    this.heartbeat().catch(() => {});
    this.slots.renew().catch((error) => this.ctx.log("warn", "could not renew slots", { consumer: this.opts.name, error }));
    for (const window of this.windows.values()) void this.commit(window);
    if (this.queue.size > 0) this.pump();
  }

  /** Starts nothing more, lets runs settle for `graceMs`, then hands the rest back and commits what settled. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    try {
      this.consumer.pause([{ topic: this.opts.topic }]);
    } catch {
      // still joining its group: nothing fetched, nothing to pause
    }
    const deadline = Date.now() + graceMs;
    while (this.runs.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    this.shutdown.abort();
    await Promise.allSettled([...this.runs.values()]);
    while (this.committing.size > 0) await new Promise((r) => setTimeout(r, 20));
    await Promise.allSettled([...this.windows.values()].map((window) => this.commit(window)));
  }

  stats(): ConsumerStats {
    const waiting = this.queue.waiting();
    const runningPerPartition = new Map<number, number>();
    for (const key of this.runs.keys()) {
      const partition = Number(key.split(":")[0]);
      runningPerPartition.set(partition, (runningPerPartition.get(partition) ?? 0) + 1);
    }
    const keys = [...new Set([...waiting.keys(), ...this.runningPerKey.keys()])]
      .map((key) => ({ key, running: this.runningPerKey.get(key) ?? 0, waiting: waiting.get(key) ?? 0 }))
      .sort((a, b) => b.running + b.waiting - (a.running + a.waiting))
      .slice(0, KEYS_REPORTED);
    return {
      partitions: this.assigned,
      running: this.active,
      capacity: this.opts.concurrency,
      windows: [...this.windows.values()]
        .map((w) => ({
          partition: w.partition,
          buffered: w.size,
          running: runningPerPartition.get(w.partition) ?? 0,
          watermark: w.watermark?.toString() ?? null,
          committed: w.lastCommitted?.toString() ?? null,
          paused: w.resume !== undefined,
        }))
        .sort((a, b) => a.partition - b.partition),
      keys,
    };
  }
}

const runKey = (entry: WindowEntry) => `${entry.window.partition}:${entry.offset}`;

/**
 * Runs `attempt` until it settles or is handed back. A failure of the infrastructure (Redis or the
 * broker away, a dead-letter write refused) is tried again with backoff, so an offset is never
 * committed for unfinished work and a partition never stays stuck behind one failure.
 */
export async function retryUntilSettled(attempt: () => Promise<RunOutcome>, opts: { log: Log; shutdown: AbortSignal; what: Record<string, string> }): Promise<RunOutcome> {
  for (let failures = 0; ; failures++) {
    if (opts.shutdown.aborted) return "handed-back";
    try {
      return await attempt();
    } catch (error) {
      opts.log("error", "run failed; trying again", { ...opts.what, error });
      const stopped = await abortableSleep(Math.min(30_000, 500 * 2 ** failures), opts.shutdown).then(
        () => false,
        () => true,
      );
      if (stopped) return "handed-back";
    }
  }
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
export async function consumeInParallel<T>(ctx: WorkerContext, opts: ParallelOptions<T>): Promise<ParallelConsumer> {
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
    private readonly ctx: WorkerContext,
    private readonly opts: ParallelOptions<T>,
  ) {
    this.slots = new KeySlots(ctx.redis, opts.groupId, opts.perKeyLimit);
    this.watchdog = setInterval(() => {
      if (this.stopping || this.replacing || Date.now() - this.lastSign < STALL_MS) return;
      ctx.log("error", "consumer shows no sign of life; starting a new one", { group: opts.groupId, silentMs: Date.now() - this.lastSign });
      void this.replace();
    }, 5000);
    this.watchdog.unref();
  }

  /** A new consumer and runner, made current, joined within START_TIMEOUT_MS (else retired, and the error thrown). */
  async start(): Promise<void> {
    const consumer = createWorkerConsumer(this.ctx.kafka, this.opts.groupId);
    const self: Incarnation<T> = { consumer, runner: new ParallelRunner(consumer, this.ctx, this.opts, this.slots), retired: false };
    this.current = self;
    this.lastSign = Date.now();
    this.ctx.presence.track(this.opts.name, () => self.runner.stats());
    this.watch(self);
    try {
      await withTimeout(
        (async () => {
          await consumer.connect();
          await consumer.subscribe({ topic: this.opts.topic, fromBeginning: true });
          await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => self.runner.takeBatch(payload) });
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
    for (const event of [consumer.events.HEARTBEAT, consumer.events.FETCH_START, consumer.events.CONNECT]) consumer.on(event, alive);
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
      this.ctx.log("error", "consumer crashed and kafkajs will not restart it; starting a new one", { group: this.opts.groupId, error: event.payload.error });
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
          this.ctx.log("error", "could not start the consumer again; trying again", { group: this.opts.groupId, error });
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
