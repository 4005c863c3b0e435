import type { KafkaMessage } from "kafkajs";

export type EntryState = "waiting" | "running" | "settled";

/** One fetched message of a partition, from the fetch until its offset is below the watermark. */
export interface WindowEntry {
  readonly window: PartitionWindow;
  readonly offset: bigint;
  /** The ordering and fairness key (the tenant for jobs, the account for reels). */
  readonly key: string;
  /** Dropped once settled: a settled entry above the watermark is only a marker. */
  message: KafkaMessage | undefined;
  state: EntryState;
}

/**
 * The fetched-but-not-committed messages of one partition, in offset order. Messages are worked
 * out of order; the offset committed is the watermark, the lowest offset not yet settled, so a
 * crash or a rebalance redelivers everything from there and loses nothing (settled messages above
 * it are redelivered too, and skipped by their owner as already final).
 */
export class PartitionWindow {
  private entries: WindowEntry[] = [];
  private head = 0;
  private unsettled = 0;
  private highest = -1n;
  private committed = -1n;
  /** Set when the partition was revoked: nothing more starts from it and nothing is committed for it. */
  revoked = false;
  /** Set while its fetch is paused because the window is full; calling it resumes the fetch. */
  resume: (() => void) | undefined;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  /** Takes the messages it has not seen yet (a rebalance refetches from the committed offset) and returns them as new entries. */
  add(messages: KafkaMessage[], keyOf: (message: KafkaMessage) => string): WindowEntry[] {
    const added: WindowEntry[] = [];
    for (const message of messages) {
      const offset = BigInt(message.offset);
      if (offset <= this.highest) continue;
      this.highest = offset;
      const entry: WindowEntry = { window: this, offset, key: keyOf(message), message, state: "waiting" };
      this.entries.push(entry);
      added.push(entry);
      this.unsettled++;
    }
    return added;
  }

  /** Marks the entry settled (finished, skipped or dead-lettered) and moves the watermark past settled entries. */
  settle(entry: WindowEntry): void {
    if (entry.state === "settled") return;
    entry.state = "settled";
    entry.message = undefined;
    this.unsettled--;
    while (this.head < this.entries.length && this.entries[this.head].state === "settled") this.head++;
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** Messages fetched and not settled: what the back-pressure bound counts. */
  get size(): number {
    return this.unsettled;
  }

  /** The offset to commit: the lowest unsettled one, or the next after everything taken. Undefined before the first message. */
  get watermark(): bigint | undefined {
    if (this.head < this.entries.length) return this.entries[this.head].offset;
    return this.highest >= 0n ? this.highest + 1n : undefined;
  }

  /** The watermark when it is past what was last committed; the caller commits it and calls `committedUpTo`. */
  commitDue(): bigint | undefined {
    const watermark = this.watermark;
    return watermark !== undefined && watermark > this.committed ? watermark : undefined;
  }

  committedUpTo(offset: bigint): void {
    if (offset > this.committed) this.committed = offset;
  }

  get lastCommitted(): bigint | undefined {
    return this.committed >= 0n ? this.committed : undefined;
  }
}
