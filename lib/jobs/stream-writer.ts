import type { Redis } from "../redis";
import type { JobStatus } from "./keys";
import { jobKeys } from "./keys";
import type { StreamMessage } from "./stream-message";

/**
 * Writes a job's stream: each message is appended to the replay list and published on the
 * channel in one MULTI, so a reader that subscribed first and then read the list sees every
 * message at least once and can drop duplicates by seq.
 */
export class StreamWriter {
  private constructor(
    private readonly redis: Redis,
    private readonly jobId: string,
    private seq: number,
  ) {}

  /** Continues after whatever earlier attempts wrote. */
  static async open(redis: Redis, jobId: string): Promise<StreamWriter> {
    return new StreamWriter(redis, jobId, await redis.llen(jobKeys.events(jobId)));
  }

  get written(): number {
    return this.seq;
  }

  delta(delta: string): Promise<void> {
    return this.emit({ delta, is_final: false });
  }

  reset(attempt: number): Promise<void> {
    return this.emit({ delta: "", is_final: false, reset: true, attempt });
  }

  /** The final message, inside the caller's MULTI so the final state and the final message land together. */
  final(multi: ReturnType<Redis["multi"]>, status: JobStatus): void {
    const message: StreamMessage = { seq: ++this.seq, delta: "", is_final: true, status };
    const raw = JSON.stringify(message);
    multi.rpush(jobKeys.events(this.jobId), raw).publish(jobKeys.stream(this.jobId), raw);
  }

  private async emit(fields: Omit<StreamMessage, "seq">): Promise<void> {
    const raw = JSON.stringify({ seq: ++this.seq, ...fields });
    await this.redis.multi().rpush(jobKeys.events(this.jobId), raw).publish(jobKeys.stream(this.jobId), raw).exec();
  }
}
