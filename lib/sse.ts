import type { StreamMessage } from "./jobs/stream-message";

export const SSE_HEARTBEAT_MS = 15_000;

/** The SSE frame of one stream message: `id: seq`, `event: delta` (or `reset`), JSON data. */
export function sseFrame(message: StreamMessage): string {
  const { seq, reset, ...data } = message;
  return `id: ${seq}\nevent: ${reset ? "reset" : "delta"}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Streams messages as server-sent events, with a comment line every 15 s so proxies keep the
 * connection open. When the client goes away the source is aborted, which releases its subscription.
 */
export function eventStreamResponse(
  open: (signal: AbortSignal) => AsyncGenerator<StreamMessage>,
  requestSignal: AbortSignal,
  heartbeatMs = SSE_HEARTBEAT_MS,
): Response {
  return sseResponse(open, sseFrame, requestSignal, heartbeatMs);
}

/** The same stream for any kind of item: `frame` turns each one into its SSE text. */
export function sseResponse<T>(
  open: (signal: AbortSignal) => AsyncGenerator<T>,
  frame: (item: T) => string,
  requestSignal: AbortSignal,
  heartbeatMs = SSE_HEARTBEAT_MS,
): Response {
  const abort = new AbortController();
  const onRequestAbort = () => abort.abort();
  requestSignal.addEventListener("abort", onRequestAbort);
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          abort.abort();
        }
      };
      send("retry: 1000\n\n");
      heartbeat = setInterval(() => send(": keep-alive\n\n"), heartbeatMs);
      try {
        for await (const item of open(abort.signal)) send(frame(item));
      } catch (error) {
        if (!abort.signal.aborted) send(`event: error\ndata: ${JSON.stringify({ message: "the stream broke; reconnect to resume" })}\n\n`);
        void error;
      } finally {
        clearInterval(heartbeat);
        requestSignal.removeEventListener("abort", onRequestAbort);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      }
    },
    cancel() {
      clearInterval(heartbeat);
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
