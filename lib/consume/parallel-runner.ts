import type { Consumer, EachBatchPayload, KafkaMessage } from "kafkajs";
import type { Log } from "../log";
import { recordHighWatermark } from "../metrics";
import { abortableSleep } from "../sleep";
import { FairQueue } from "./fair-queue";
import type { KeySlots } from "./key-slots";
import { parsePayload } from "./parse-payload";
import { PartitionWindow, type WindowEntry } from "./partition-window";
import type { ConsumerStats, ParallelControl, ParallelOptions, RunOutcome } from "./parallel-consumer";

const SLOT_RETRY_MS = 200;
const HANDED_BACK_RETRY_MS = 1000;
const TICK_MS = 1000;
/** How long settled work waits for its offset's commit: one commit request for every partition's watermark, not one per message. */
const COMMIT_EVERY_MS = 100;
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
 *   every partition's watermark goes in one commit request at most every COMMIT_EVERY_MS;
 * - a message is parsed once, as it starts, with its topic's schema: `work` gets the typed payload,
 *   one that does not parse goes to `onInvalid` and is settled, whatever the consumer; one that
 *   `skip` says is of no use here is settled unparsed.
 */
const settledAtOnce = async (): Promise<RunOutcome> => "settled";

export class ParallelRunner<T> {
  private readonly windows = new Map<number, PartitionWindow>();
  private readonly queue = new FairQueue<WindowEntry>();
  /** Runs of this runner by partition and offset, so a redelivered message follows its run instead of starting again. */
  private readonly runs = new Map<string, Promise<RunOutcome>>();
  private readonly runningPerKey = new Map<string, number>();
  private readonly blockedUntil = new Map<string, number>();
  private committing: Promise<void> | undefined;
  private commitTimer: ReturnType<typeof setTimeout> | undefined;
  private commitFailing = false;
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
    if (dropped.length)
      this.ctx.log("info", "partitions revoked; their waiting messages go to the next owner", {
        consumer: this.opts.name,
        dropped: dropped.length,
      });
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

  /**
   * Takes as many waiting messages as there are free local slots and asks for their key slots in
   * one round trip, then starts those that got one: under a backlog the free slots fill at once,
   * not one round trip per message.
   */
  private async startWhatFits(): Promise<void> {
    while (!this.stopping && this.active < this.opts.concurrency) {
      const now = Date.now();
      const taken: { entry: WindowEntry; runId: string }[] = [];
      while (taken.length < this.opts.concurrency - this.active) {
        const entry = this.queue.take((key) => (this.blockedUntil.get(key) ?? 0) <= now);
        if (!entry) break;
        taken.push({ entry, runId: `${this.ctx.workerId}:${this.opts.name}:${++this.runSeq}` });
      }
      if (taken.length === 0) return;
      let slots: boolean[];
      try {
        slots = await this.slots.acquireAll(taken.map(({ entry, runId }) => ({ key: entry.key, slot: runId })));
      } catch (error) {
        this.ctx.log("warn", "could not take slots; trying again", { consumer: this.opts.name, error });
        slots = taken.map(() => false);
      }
      // Back to the front of their keys' queues, the last first, so each key keeps its order.
      for (let i = taken.length - 1; i >= 0; i--) {
        const { entry } = taken[i];
        if (slots[i] || this.stopping || entry.window.revoked) continue;
        // The key runs its share across the cluster: its next message waits at the head of its queue.
        this.queue.unshift(entry);
        this.blockedUntil.set(entry.key, Date.now() + SLOT_RETRY_MS);
        this.retryLater(SLOT_RETRY_MS);
      }
      for (const [i, { entry, runId }] of taken.entries()) {
        if (!slots[i]) continue;
        // A key slot not released lapses with its lease within 10 s.
        if (this.stopping || entry.window.revoked) await this.slots.release(runId).catch(() => {});
        else this.start(entry, runId);
      }
    }
  }

  private start(entry: WindowEntry, runId: string): void {
    const { window } = entry;
    const message = entry.message!;
    entry.state = "running";
    this.active++;
    this.runningPerKey.set(entry.key, (this.runningPerKey.get(entry.key) ?? 0) + 1);
    const control: ParallelControl = {
      partition: window.partition,
      heartbeat: () => this.heartbeat(),
      shutdown: this.shutdown.signal,
      runId,
      slotRelease: () => this.slots.handOver(runId),
    };
    const what = { consumer: this.opts.name, partition: String(window.partition), offset: message.offset };
    const attempt = this.opts.skip?.(message) ? settledAtOnce : this.attemptOf(message, control);
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

  /** The message's run: `work` with its parsed payload, or `onInvalid` with why it does not parse. */
  private attemptOf(message: KafkaMessage, control: ParallelControl): () => Promise<RunOutcome> {
    const payload = parsePayload(this.opts.schema, message.value);
    return payload.success
      ? () => this.opts.work(payload.data, message, control)
      : () => this.opts.onInvalid(message, payload.reason, control).then((): RunOutcome => "settled");
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
    this.commitSoon();
    if (window.resume && window.size <= this.opts.maxBuffered / 2) {
      const resume = window.resume;
      window.resume = undefined;
      resume();
    }
  }

  /** Commits the watermarks that moved within COMMIT_EVERY_MS: a burst of settled messages costs one commit, not one each. */
  private commitSoon(): void {
    this.commitTimer ??= setTimeout(() => {
      this.commitTimer = undefined;
      void this.commit();
    }, COMMIT_EVERY_MS);
  }

  /** Commits every assigned partition's watermark that moved, in one request; one request in flight at a time. */
  private async commit(): Promise<void> {
    while (this.committing) await this.committing;
    const due = [...this.windows.values()].flatMap((window) => {
      const offset = window.revoked ? undefined : window.commitDue();
      return offset === undefined ? [] : [{ window, offset }];
    });
    if (due.length === 0) return;
    this.committing = this.commitOffsets(due).finally(() => (this.committing = undefined));
    await this.committing;
  }

  private async commitOffsets(due: { window: PartitionWindow; offset: bigint }[]): Promise<void> {
    try {
      await this.consumer.commitOffsets(
        due.map(({ window, offset }) => ({
          topic: window.topic,
          partition: window.partition,
          offset: offset.toString(),
        })),
      );
      for (const { window, offset } of due) window.committedUpTo(offset);
      this.commitFailing = false;
    } catch (error) {
      // Expected around a rebalance; the tick tries again, and the next owner redelivers from the last commit.
      if (!this.commitFailing)
        this.ctx.log("warn", "could not commit offsets", {
          consumer: this.opts.name,
          offsets: due.map(({ window, offset }) => `${window.partition}:${offset}`).join(" "),
          error,
        });
      this.commitFailing = true;
    }
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
    this.slots
      .renew()
      .catch((error) => this.ctx.log("warn", "could not renew slots", { consumer: this.opts.name, error }));
    void this.commit();
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
    if (this.commitTimer) clearTimeout(this.commitTimer);
    await this.commit();
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
export async function retryUntilSettled(
  attempt: () => Promise<RunOutcome>,
  opts: { log: Log; shutdown: AbortSignal; what: Record<string, string> },
): Promise<RunOutcome> {
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
