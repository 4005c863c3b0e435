import { open, type FileHandle } from "node:fs/promises";
import { getMetrics } from "../metrics";

/**
 * Files served from disk, with HTTP Range, as a web Response that is safe to abandon.
 *
 * Not `Readable.toWeb(createReadStream())`: when the client goes away mid-transfer (a <video>
 * does it on every seek and every page it leaves), Node's adapter can close the web stream's
 * controller twice and throw where nobody can catch it (nodejs/node#54205). Here the stream pulls
 * one chunk at a time from a FileHandle, cancel closes the handle, and no controller call is made
 * once the stream is cancelled or finished.
 */

const CHUNK_BYTES = 64 * 1024;

export interface FileToServe {
  path: string;
  size: number;
  /** content-type, etag, cache-control…: sent on every answer. An etag also decides If-Range. */
  headers: Record<string, string>;
}

/** The whole file (200), one range of it (206), or 416; HEAD gets the headers alone. */
export function fileResponse(request: Request, file: FileToServe): Response {
  const headers: Record<string, string> = { ...file.headers, "accept-ranges": "bytes" };
  const ifRange = request.headers.get("if-range");
  const range = ifRange && ifRange !== headers.etag ? undefined : parseRange(request.headers.get("range"), file.size);
  if (range === "unsatisfiable")
    return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${file.size}` } });

  const [start, end] = range ?? [0, file.size - 1];
  const body = request.method === "HEAD" || file.size === 0 ? null : fileStream(file.path, start, end, request.signal);
  return new Response(body, {
    status: range ? 206 : 200,
    headers: {
      ...headers,
      "content-length": String(end - start + 1),
      ...(range ? { "content-range": `bytes ${start}-${end}/${file.size}` } : {}),
    },
  });
}

/** One `bytes=` range; several ranges or a malformed header are ignored (the whole file is a valid answer). */
export function parseRange(header: string | null, size: number): [number, number] | "unsatisfiable" | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return [start, end];
}

/**
 * Bytes `start`…`end` (inclusive) of a file. The file is opened on the first pull (the stream
 * reads one chunk ahead, so that is at once) and closed at the end, on error, on cancel and when
 * `signal` (the request's) aborts; `dispatch_file_streams_open` counts the files open meanwhile.
 * The signal is needed: a server waiting to write to a client that went away may never cancel
 * the body (a busy CI saw a file left open until the garbage collector closed its handle).
 */
export function fileStream(
  filePath: string,
  start: number,
  end: number,
  signal?: AbortSignal,
): ReadableStream<Uint8Array> {
  let handle: Promise<FileHandle> | undefined;
  let position = start;
  // Set synchronously by cancel, end and error, before any await: past it, the controller is not ours.
  let finished = false;
  const release = async () => {
    finished = true;
    const opened = handle;
    handle = undefined;
    if (!opened) return;
    getMetrics().fileStreamsOpen.dec();
    // A handle that failed to open has nothing to close; the pull already reported its error.
    await opened.then((file) => file.close()).catch(() => undefined);
  };
  if (signal?.aborted) finished = true;
  else signal?.addEventListener("abort", () => void release(), { once: true });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (finished) return;
        try {
          if (!handle) {
            handle = open(filePath, "r");
            getMetrics().fileStreamsOpen.inc();
          }
          const file = await handle;
          const length = Math.min(CHUNK_BYTES, end + 1 - position);
          const { bytesRead, buffer } = await file.read(new Uint8Array(length), 0, length, position);
          if (finished) return;
          if (bytesRead === 0) throw new Error(`${filePath} ended at byte ${position}, before byte ${end + 1}`);
          position += bytesRead;
          controller.enqueue(buffer.subarray(0, bytesRead));
          if (position > end) {
            controller.close();
            await release();
          }
        } catch (error) {
          if (finished) return;
          controller.error(error);
          await release();
        }
      },
      cancel: release,
    },
    { highWaterMark: 1 },
  );
}
