import { ApiError } from "../errors";

/**
 * The bytes of the first file part of a multipart/form-data body, streamed: only a boundary's
 * length is held back between chunks, so a large video never sits in memory.
 */

const MAX_PART_HEADER_BYTES = 16 * 1024;

export function multipartBoundary(contentType: string): string | undefined {
  const match = /boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

const malformed = (detail: string) => new ApiError("validation", `The multipart body ${detail}.`);

/** The web-standard reader of a body, from the platform's streams or node:stream/web's. */
interface ByteStream {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(reason?: unknown): Promise<void> };
}

export async function* firstFilePart(body: ByteStream, boundary: string): AsyncGenerator<Uint8Array> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const reader = body.getReader();
  // A leading CRLF lets the first boundary match like every later one.
  let buffer = Buffer.from("\r\n");
  let state: "seek" | "headers" | "file" = "seek";
  const pull = async (): Promise<boolean> => {
    const { done, value } = await reader.read();
    if (done || !value) return false;
    buffer = Buffer.concat([buffer, value]);
    return true;
  };
  try {
    for (;;) {
      if (state === "seek") {
        const at = buffer.indexOf(delimiter);
        if (at >= 0) {
          buffer = buffer.subarray(at + delimiter.length);
          state = "headers";
          continue;
        }
        buffer = buffer.subarray(Math.max(0, buffer.length - delimiter.length));
        if (!(await pull())) throw malformed("has no file part");
        continue;
      }
      if (state === "headers") {
        if (buffer.subarray(0, 2).toString("latin1") === "--") throw malformed("has no file part");
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) {
          if (buffer.length > MAX_PART_HEADER_BYTES) throw malformed("has a part whose headers are too long");
          if (!(await pull())) throw malformed("ended inside a part's headers");
          continue;
        }
        const headers = buffer.subarray(0, end).toString("latin1");
        buffer = buffer.subarray(end + 4);
        state = /content-disposition:[^\r\n]*\bfilename\*?=/i.test(headers) ? "file" : "seek";
        continue;
      }
      const at = buffer.indexOf(delimiter);
      if (at >= 0) {
        if (at > 0) yield buffer.subarray(0, at);
        return;
      }
      const keep = delimiter.length - 1;
      if (buffer.length > keep) {
        yield buffer.subarray(0, buffer.length - keep);
        buffer = buffer.subarray(buffer.length - keep);
      }
      if (!(await pull())) throw malformed("ended inside the file");
    }
  } finally {
    // The rest is not wanted; a cancel that fails means the stream is closed already.
    await reader.cancel().catch(() => {});
  }
}
