import type { RedisCommand } from "../lease";
import type { Redis } from "../redis";
import { redisScript } from "../redis-script";
import type { FinishReason, JobStatus } from "./status";
import { jobKeys, OPEN_JOB_TTL_S } from "./keys";
import { finalStreamMessage, type StreamMessage } from "./stream-message";

/** Text a stream holds back while its previous message is written, before a delta waits for that write. */
const MAX_HELD_CHARS = 64 * 1024;

/**
 * Writes a job's stream: each message is appended to the replay list and published on the
 * channel in one step (a script), so a reader that subscribed first and then read the list sees every
 * message at least once and can drop duplicates by seq.
 *
 * A delta is written at once when the job has no message being written; otherwise it is held and
 * goes out, with every other delta given meanwhile, as the job's next message once that write is
 * done. A lone stream on an idle process sends one message per delta; when Redis or the process
 * falls behind, a message carries several deltas' text and the cost per delta falls as the load
 * rises. `delta` resolves on the next turn of the event loop (or, past MAX_HELD_CHARS held, once
 * written): a model that is never made to wait, such as the built-in one unpaced, still lets the
 * process's timers (lease renewals, the group's heartbeats) and other jobs run between its deltas.
 * `flush` waits until all of it is written and reports a failed write.
 */
export class StreamWriter {
  private held = "";
  private heldCount = 0;
  private sending: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  /** Set once the run has its last delta: what is still held waits for the final write instead of a message of its own. */
  private ending = false;

  private constructor(
    private readonly redis: Redis,
    private readonly jobId: string,
    private seq: number,
  ) {}

  /** Continues after whatever earlier attempts wrote. */
  static async open(redis: Redis, jobId: string): Promise<StreamWriter> {
    return StreamWriter.continueAfter(redis, jobId, await redis.llen(jobKeys.events(jobId)));
  }

  /** Continues after `written` messages, a count read already (the job's start reads it with the rest). */
  static continueAfter(redis: Redis, jobId: string, written: number): StreamWriter {
    return new StreamWriter(redis, jobId, written);
  }

  get written(): number {
    return this.seq;
  }

  /** Rejects with the error of a write that failed since the last reset: the text after it would leave a gap. */
  delta(delta: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    if (!delta) return Promise.resolve();
    this.held += delta;
    this.heldCount++;
    this.sending ??= this.sendHeld();
    return this.held.length > MAX_HELD_CHARS ? this.flush() : nextTurn();
  }

  /** Waits until every delta given is written; rejects if one of the writes failed. */
  async flush(): Promise<void> {
    await this.idle();
    if (this.failure) throw this.failure.error;
  }

  /**
   * The run has given its last delta: waits for the message on its way and rejects if a write
   * failed; text still held is not sent alone but goes with the final message (`final`), in the
   * final write's round trip.
   */
  async end(): Promise<void> {
    await this.settle();
    if (this.failure) throw this.failure.error;
  }

  /** As `end`, whether or not a write failed (the failure was answered already, or does not matter now). */
  async settle(): Promise<void> {
    this.ending = true;
    await this.idle();
  }

  /** Starts the stream over for a new attempt, after whatever the last one still had on its way. */
  async reset(attempt: number): Promise<void> {
    await this.idle();
    this.failure = undefined;
    this.ending = false;
    return this.emit({ delta: "", is_final: false, reset: true, attempt });
  }

  /** Drops the text not sent yet: the run no longer holds the job (a hand-back), its output is not wanted. */
  abandon(): void {
    this.dropHeld();
  }

  /**
   * The final message as commands, for the caller's atomic final write (final state and final
   * message land together), after a message with the text still held if there is any. Only once
   * nothing is being written (`end` or `settle`): the final message must come last.
   */
  final(status: JobStatus, finishReason: FinishReason): RedisCommand[] {
    if (this.sending)
      throw new Error(`job ${this.jobId}: the final message was asked for while deltas were still being written`);
    const messages: StreamMessage[] = [];
    if (this.held) messages.push({ seq: ++this.seq, ...this.takeHeld() });
    messages.push({ seq: ++this.seq, ...finalStreamMessage(status, finishReason) });
    return messages.flatMap((message): RedisCommand[] => {
      const raw = JSON.stringify(message);
      return [
        ["RPUSH", jobKeys.events(this.jobId), raw],
        ["PUBLISH", jobKeys.stream(this.jobId), raw],
      ];
    });
  }

  /** Waits until nothing is being written, whether or not the writes succeeded. */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private dropHeld(): void {
    this.held = "";
    this.heldCount = 0;
  }

  /** The held text as a delta message's fields, and nothing held any more. */
  private takeHeld(): Omit<StreamMessage, "seq"> {
    const fields = { delta: this.held, ...(this.heldCount > 1 ? { deltas: this.heldCount } : {}), is_final: false };
    this.dropHeld();
    return fields;
  }

  /**
   * Sends what is held, one message at a time, until nothing is (or, once the run ended, until the
   * message on its way is written); a failure drops the rest and is kept for the next call.
   */
  private async sendHeld(): Promise<void> {
    try {
      while (this.held && !this.failure && !this.ending) await this.emit(this.takeHeld());
    } catch (error) {
      this.failure = { error };
      this.dropHeld();
    } finally {
      this.sending = undefined;
    }
  }

  private emit(fields: Omit<StreamMessage, "seq">): Promise<void> {
    return batchFor(this.redis).add(this.jobId, JSON.stringify({ seq: ++this.seq, ...fields }));
  }
}

// A batch's messages in one script: each appended to its job's replay list and published on its
// channel. A list this creates (its first message) gets the open-job expiry: a running job's list
// expires like its state, the final write's 24 h is never lengthened by a late message of a run
// that lost the job, and a list a delete removed mid-run is not left behind for ever.
// KEYS: each message's list. ARGV: the expiry (s), then each message's channel and text.
const APPEND = redisScript(`
for i, key in ipairs(KEYS) do
  local raw = ARGV[2 * i + 1]
  if redis.call('RPUSH', key, raw) == 1 then redis.call('EXPIRE', key, ARGV[1]) end
  redis.call('PUBLISH', ARGV[2 * i], raw)
end
return #KEYS`);

/**
 * The messages every stream of the process writes in one turn of the event loop, sent as one
 * script: one socket write, one round trip and one command for all of them instead of a MULTI of
 * three commands per delta. With many jobs streaming (or a busy process whose timers fire late,
 * together) that is most of the cost of a delta; a lone stream waits only until the end of the
 * current turn. Each writer still awaits its own message, so a job's messages stay in order and
 * its final message comes after them.
 */
class WriteBatch {
  private messages: { jobId: string; raw: string }[] = [];
  private written: Promise<void> | undefined;

  constructor(private readonly redis: Redis) {}

  add(jobId: string, raw: string): Promise<void> {
    this.messages.push({ jobId, raw });
    this.written ??= new Promise<void>((resolve, reject) => setImmediate(() => this.flush().then(resolve, reject)));
    return this.written;
  }

  private async flush(): Promise<void> {
    const messages = this.messages;
    this.messages = [];
    this.written = undefined;
    const keys = messages.map((m) => jobKeys.events(m.jobId));
    const args: (string | number)[] = [OPEN_JOB_TTL_S];
    for (const { jobId, raw } of messages) args.push(jobKeys.stream(jobId), raw);
    await APPEND.run(this.redis, keys, args);
  }
}

const batches = new WeakMap<Redis, WriteBatch>();

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function batchFor(redis: Redis): WriteBatch {
  let batch = batches.get(redis);
  if (!batch) batches.set(redis, (batch = new WriteBatch(redis)));
  return batch;
}
