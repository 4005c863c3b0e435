/** What readWithin needs of a body: the web-standard reader, whether from the platform or undici. */
interface ByteStream {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(reason?: unknown): Promise<void> };
}

/**
 * Reads a body chunk by chunk into `take`, at most `maxBytes`: as soon as it crosses the limit the
 * stream is cancelled and `tooLarge()` thrown, so nothing larger is ever held or written. Returns
 * the bytes read (0 for no body).
 */
export async function readWithin(
  body: ByteStream | null,
  maxBytes: number,
  tooLarge: () => Error,
  take: (chunk: Uint8Array) => unknown,
): Promise<number> {
  if (!body) return 0;
  const reader = body.getReader();
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done || !value) return total;
    total += value.byteLength;
    if (total > maxBytes) {
      // The rest is not wanted; a cancel that fails means the stream is closed already.
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    await take(value);
  }
}
