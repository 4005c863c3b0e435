import { ApiError } from "../errors";
import { getMetrics } from "../metrics";
import { sseResponse } from "../web/sse";

/** How long a client refused for too many open streams waits before it tries again. */
export const STREAMS_RETRY_AFTER_S = 5;

/**
 * The server-sent event streams a web process holds open, counted per tenant across jobs and reel
 * events, so one tenant cannot hold every connection (and subscription) of the process.
 */
export class OpenStreams {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /**
   * An SSE response for `tenantId`, holding one of its slots until the stream ends (the source is
   * done, or the client went away). 429 with Retry-After when the tenant holds `limit` already.
   */
  respond<T>(
    tenantId: string,
    open: (signal: AbortSignal) => AsyncIterable<readonly T[]>,
    frame: (item: T) => string,
    requestSignal: AbortSignal,
  ): Response {
    return this.reserve(tenantId).respond(open, frame, requestSignal);
  }

  /**
   * Takes a slot now (429 as above), for a caller that must be refused before it does what the
   * stream will show (POST /v1/responses submits a job): `respond` then streams in that slot, or
   * `release` gives it back (the work failed, or the caller waited in it without streaming).
   */
  reserve(tenantId: string): StreamSlot {
    const release = this.take(tenantId);
    return {
      respond: (open, frame, requestSignal) =>
        sseResponse((signal) => held(open(signal), release), frame, requestSignal),
      release,
    };
  }

  /** Open streams of a tenant, for tests and health. */
  count(tenantId: string): number {
    return this.counts.get(tenantId) ?? 0;
  }

  private take(tenantId: string): () => void {
    const count = this.count(tenantId);
    if (count >= this.limit) {
      throw new ApiError(
        "rate-limited",
        `This tenant has ${this.limit} streams open already; close one (or wait for one to end) and try again.`,
        undefined,
        {
          "Retry-After": String(STREAMS_RETRY_AFTER_S),
        },
      );
    }
    this.counts.set(tenantId, count + 1);
    getMetrics().sseConnections.inc();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      getMetrics().sseConnections.dec();
      const left = this.count(tenantId) - 1;
      if (left > 0) this.counts.set(tenantId, left);
      else this.counts.delete(tenantId);
    };
  }
}

export interface StreamSlot {
  respond<T>(
    open: (signal: AbortSignal) => AsyncIterable<readonly T[]>,
    frame: (item: T) => string,
    requestSignal: AbortSignal,
  ): Response;
  release(): void;
}

async function* held<T>(source: AsyncIterable<T>, release: () => void): AsyncGenerator<T> {
  try {
    yield* source;
  } finally {
    release();
  }
}
