/** What a refused request may still send before Dispatch stops listening and closes its connection. */
export const DRAIN_MAX_BYTES = 1024 * 1024;
export const DRAIN_MAX_MS = 2000;

/**
 * A request's body whose cancel first reads and drops what the client is still sending (at most
 * `maxBytes`, for at most `maxMs`), and only then cancels it. Next hands a route handler the Node
 * request itself as the body, and cancelling a body that is still arriving destroys the request's
 * socket at once: a client refused part-way through its body (a malformed multipart, a body over
 * the limit) read a reset connection instead of the answer. A client that goes on sending past the
 * bounds still has its connection closed: a refused body is not read to its end at any size.
 */
export function drainingBody(
  body: ReadableStream<Uint8Array>,
  { maxBytes = DRAIN_MAX_BYTES, maxMs = DRAIN_MAX_MS } = {},
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel(reason) {
        await drain(reader, maxBytes, Date.now() + maxMs);
        // Closed already when the drain reached the end, or the client went away.
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/** Reads and drops chunks until the end, `maxBytes` or `deadline`, whichever comes first. */
async function drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  deadline: number,
): Promise<void> {
  let dropped = 0;
  while (dropped <= maxBytes) {
    const left = deadline - Date.now();
    if (left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), left)));
    try {
      const read = await Promise.race([reader.read(), timedOut]);
      if (read === "timeout" || read.done) return;
      dropped += read.value.byteLength;
    } catch {
      return; // the client went away: nothing left to drain
    } finally {
      clearTimeout(timer);
    }
  }
}
