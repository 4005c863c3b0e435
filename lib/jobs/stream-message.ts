import type { FinishReason, JobStatus } from "./status";

/**
 * What a job's stream carries, on the pub/sub channel and in the replay list alike. `seq` counts
 * from 1 over the whole job; a `reset` message says a new attempt started over, and the client
 * drops the text it had; the message with `is_final` true ends the stream and names the status
 * and why generation stopped.
 */
export interface StreamMessage {
  seq: number;
  delta: string;
  /** How many of the model's deltas `delta` joins, when more than one (the worker was behind: lib/jobs/stream-writer.ts). */
  deltas?: number;
  is_final: boolean;
  reset?: true;
  attempt?: number;
  status?: JobStatus;
  finish_reason?: FinishReason;
}

/** The message that ends a job's stream, without its seq (the writer, or the cancel script, numbers it). */
export function finalStreamMessage(status: JobStatus, finishReason: FinishReason): Omit<StreamMessage, "seq"> {
  return { delta: "", is_final: true, status, finish_reason: finishReason };
}

export function parseStreamMessage(raw: string): StreamMessage | undefined {
  try {
    const value = JSON.parse(raw) as StreamMessage;
    return typeof value.seq === "number" && typeof value.delta === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
