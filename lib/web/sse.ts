import { validationError } from "../errors";

export const SSE_HEARTBEAT_MS = 15_000;

/** Where a stream client resumes: `Last-Event-ID` (a reconnecting EventSource) or `?after=`. Any stream of seq-numbered events. */
export function parseResumePoint(request: Request): number {
  const raw = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("after") ?? "0";
  if (!/^\d{1,9}$/.test(raw.trim()))
    throw validationError([{ path: "after", message: "must be a non-negative integer (a seq)" }]);
  return Number(raw);
}

/**
 * Streams items as server-sent events, with a comment line every 15 s so proxies keep the
 * connection open; when the client goes away the source is aborted, which releases its
 * subscription. The source yields items in batches, `frame` (the feature's) turns each one into
 * its SSE text. What one client is due within a turn of the event loop goes out as one
 * chunk: under load every frame its own chunk (one trip through the response stream and one
 * socket write each) is what saturated the web process.
 */
export function sseResponse<T>(
  open: (signal: AbortSignal) => AsyncIterable<readonly T[]>,
  frame: (item: T) => string,
  requestSignal: AbortSignal,
  heartbeatMs = SSE_HEARTBEAT_MS,
): Response {
  const abort = new AbortController();
  const onRequestAbort = () => abort.abort();
  requestSignal.addEventListener("abort", onRequestAbort);
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let writer: FrameWriter | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const out = (writer = coalescingWriter(controller, () => abort.abort()));
      out.write("retry: 1000\n\n");
      out.flush();
      heartbeat = setInterval(() => out.write(": keep-alive\n\n"), heartbeatMs);
      try {
        for await (const batch of open(abort.signal)) for (const item of batch) out.write(frame(item));
      } catch (error) {
        if (!abort.signal.aborted)
          out.write(`event: error\ndata: ${JSON.stringify({ message: "the stream broke; reconnect to resume" })}\n\n`);
        void error;
      } finally {
        clearInterval(heartbeat);
        requestSignal.removeEventListener("abort", onRequestAbort);
        out.close();
      }
    },
    cancel() {
      clearInterval(heartbeat);
      writer?.cancel();
      abort.abort();
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}

/** Where a stream's SSE text goes: `write` buffers, `flush` sends, `close` flushes and ends, `cancel` drops. */
export interface FrameWriter {
  write(text: string): void;
  flush(): void;
  close(): void;
  cancel(): void;
}

/**
 * Buffers what is written and enqueues it as one chunk at the end of the event loop's turn
 * (setImmediate: after every socket read of this turn's poll phase, so all the Redis messages read
 * together reach a client together). Nothing reaches the controller after `close`, `cancel` or a
 * failed enqueue (the client went away: `onBroken`).
 */
export function coalescingWriter(
  controller: ReadableStreamDefaultController<Uint8Array>,
  onBroken: () => void,
): FrameWriter {
  const encoder = new TextEncoder();
  let pending = "";
  let scheduled: ReturnType<typeof setImmediate> | undefined;
  let done = false;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (done || !pending) return;
    const text = pending;
    pending = "";
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      done = true;
      onBroken();
    }
  };
  const stop = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    pending = "";
    done = true;
  };
  return {
    write(text) {
      if (done) return;
      pending += text;
      scheduled ??= setImmediate(flush);
    },
    flush,
    close() {
      flush();
      if (done) return;
      stop();
      try {
        controller.close();
      } catch {
        // already closed by the client
      }
    },
    cancel: stop,
  };
}
