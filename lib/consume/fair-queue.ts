/**
 * Waiting work, one FIFO queue per key, taken one key at a time in turn (round-robin), so a key
 * with thousands of items waiting and a key with one get the next free slot alike, and each key's
 * items come out in the order they went in.
 */
export class FairQueue<T extends { key: string }> {
  private readonly queues = new Map<string, T[]>();
  private ring: string[] = [];
  private cursor = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    this.queueOf(item.key).push(item);
    this.count++;
  }

  /** Puts an item back at the front of its key's queue (it was taken and could not start). */
  unshift(item: T): void {
    this.queueOf(item.key).unshift(item);
    this.count++;
  }

  /** The head of the next key in turn that `eligible` accepts, removed from its queue. */
  take(eligible: (key: string) => boolean): T | undefined {
    for (let seen = 0; seen < this.ring.length; seen++) {
      if (this.cursor >= this.ring.length) this.cursor = 0;
      const key = this.ring[this.cursor];
      if (!eligible(key)) {
        this.cursor++;
        continue;
      }
      const queue = this.queues.get(key)!;
      const item = queue.shift()!;
      this.count--;
      if (queue.length === 0) this.dropKey(key);
      else this.cursor++;
      return item;
    }
    return undefined;
  }

  /** Removes and returns every item `match` picks (a revoked partition's waiting messages). */
  remove(match: (item: T) => boolean): T[] {
    const removed: T[] = [];
    for (const [key, queue] of [...this.queues]) {
      const kept = queue.filter((item) => !match(item) || (removed.push(item), false));
      this.count -= queue.length - kept.length;
      if (kept.length === 0) this.dropKey(key);
      else this.queues.set(key, kept);
    }
    return removed;
  }

  /** Waiting items per key. */
  waiting(): Map<string, number> {
    return new Map([...this.queues].map(([key, queue]) => [key, queue.length]));
  }

  private queueOf(key: string): T[] {
    let queue = this.queues.get(key);
    if (!queue) {
      queue = [];
      this.queues.set(key, queue);
      this.ring.push(key);
    }
    return queue;
  }

  private dropKey(key: string): void {
    this.queues.delete(key);
    const at = this.ring.indexOf(key);
    this.ring.splice(at, 1);
    if (at < this.cursor) this.cursor--;
  }
}
