import { mkdir } from "node:fs/promises";
import { removeFile } from "../remove-file";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { Dispatcher, Response } from "undici";
import { probeVideo, probeVideoAt, type VideoProbe } from "./probe-video";
import { VideoProbeError } from "./video-probe-error";
import { downloadVideo, NOT_A_VIDEO } from "../net/fetch-video";
import { discard, guardedFetch, VideoFetchError } from "../net/guarded-fetch";
import { OWN_FETCHER_HEADER } from "../net/this-machine";

/**
 * Probes a video at a URL without downloading it: HTTP range requests for the head and for the
 * boxes the probe asks for (the moov, wherever it is, and the top-level box headers), through the
 * same SSRF-guarded dispatcher and URL rules as the sandbox's fetcher. A server that ignores
 * ranges gets a bounded streaming download instead, probed and deleted.
 */

export interface RemoteProbeOptions {
  /** Connects only where the address policy allows (createPublicAgent). */
  dispatcher: Dispatcher;
  /** The fallback download's cap; larger videos are refused by Graph anyway. */
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Where the fallback download goes for a moment. */
  tmpDir: string;
  signal?: AbortSignal;
}

export interface RemoteProbe {
  probe: VideoProbe;
  /** The file's size from Content-Range (or the download). */
  size: number;
  /** Bytes read over the network to probe it. */
  bytesRead: number;
  method: "ranges" | "download";
}

const BLOCK = 256 * 1024;
/** A moov larger than this (a multi-hour file) is not worth probing by ranges. */
const MAX_RANGED_BYTES = 64 * 1024 * 1024;
const RANGE_HEADERS = {
  "user-agent": "Dispatch preflight",
  accept: "video/mp4,video/quicktime,video/*;q=0.9,*/*;q=0.5",
  [OWN_FETCHER_HEADER]: "preflight",
};

export async function probeRemoteVideo(url: string, options: RemoteProbeOptions): Promise<RemoteProbe> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  const ranges = rangeRequests(new URL(url), options, signal);
  try {
    const first = await ranges.get(0, BLOCK - 1);
    const size = await rangedSize(first);
    if (size === undefined) return await probeByDownload(ranges.target().href, options, signal);
    const reader = blockReader(ranges, size);
    await reader.keep(first, 0, Math.min(BLOCK, size) - 1);
    return { probe: await probeVideoAt(size, reader.readAt), size, bytesRead: reader.bytesRead(), method: "ranges" };
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (deadline.aborted)
      throw new VideoFetchError(`reading the video took longer than ${Math.round(options.timeoutMs / 1000)} s`, true);
    if (error instanceof VideoFetchError || error instanceof VideoProbeError) throw error;
    throw new VideoFetchError("the host could not be reached, or it is not a public address");
  }
}

interface RangeRequests {
  get(start: number, end: number): Promise<Response>;
  /** The last hop: later ranges go straight to it. */
  target(): URL;
}

function rangeRequests(start: URL, options: RemoteProbeOptions, signal: AbortSignal): RangeRequests {
  let target = start;
  const { dispatcher, maxRedirects } = options;
  return {
    async get(from, to) {
      const answer = await guardedFetch(target, {
        dispatcher,
        maxRedirects,
        signal,
        headers: { ...RANGE_HEADERS, range: `bytes=${from}-${to}` },
      });
      target = answer.url;
      return answer.response;
    },
    target: () => target,
  };
}

/** The file's size from the first range's answer; undefined when the server ignores ranges (probe by download). */
async function rangedSize(first: Response): Promise<number | undefined> {
  if (first.status === 200) {
    await discard(first);
    return undefined;
  }
  if (first.status !== 206) {
    await discard(first);
    throw new VideoFetchError(`the server answered HTTP ${first.status}`);
  }
  if (/^text\/html\b/i.test(first.headers.get("content-type") ?? "")) {
    await discard(first);
    throw new VideoFetchError(NOT_A_VIDEO);
  }
  const size = totalOf(first);
  if (size === undefined) await discard(first);
  return size;
}

/** The file as blocks of BLOCK bytes, each fetched once by a range request when first read. */
function blockReader(ranges: RangeRequests, size: number) {
  const blocks = new Map<number, Uint8Array>();
  let bytesRead = 0;
  const keep = async (response: Response, start: number, end: number) => {
    const range = /^bytes (\d+)-(\d+)\//.exec(response.headers.get("content-range") ?? "");
    if (response.status !== 206 || Number(range?.[1]) !== start) {
      await discard(response);
      throw new VideoFetchError(
        `the server answered a range request with HTTP ${response.status} and no matching Content-Range`,
      );
    }
    const bytes = await readAtMost(response, end - start + 1);
    bytesRead += bytes.byteLength;
    for (let at = 0; at < bytes.byteLength; at += BLOCK)
      blocks.set((start + at) / BLOCK, bytes.subarray(at, Math.min(at + BLOCK, bytes.byteLength)));
  };
  const fetchMissing = async (firstBlock: number, lastBlock: number) => {
    const missing = [];
    for (let b = firstBlock; b <= lastBlock; b++) if (!blocks.has(b)) missing.push(b);
    if (missing.length === 0) return;
    const from = missing[0] * BLOCK;
    const to = Math.min((missing[missing.length - 1] + 1) * BLOCK, size) - 1;
    if (bytesRead + (to - from + 1) > MAX_RANGED_BYTES)
      throw new VideoFetchError("the video's index (moov) is too large to check by range requests");
    await keep(await ranges.get(from, to), from, to);
  };
  const readAt = async (position: number, length: number): Promise<Uint8Array> => {
    const end = Math.min(position + length, size);
    if (end <= position) return new Uint8Array();
    const firstBlock = Math.floor(position / BLOCK);
    const lastBlock = Math.floor((end - 1) / BLOCK);
    await fetchMissing(firstBlock, lastBlock);
    const out = new Uint8Array(end - position);
    for (let b = firstBlock; b <= lastBlock; b++) {
      const block = blocks.get(b) ?? new Uint8Array();
      const blockStart = b * BLOCK;
      const from = Math.max(position, blockStart);
      const to = Math.min(end, blockStart + block.byteLength);
      if (to > from) out.set(block.subarray(from - blockStart, to - blockStart), from - position);
    }
    return out;
  };
  return { keep, readAt, bytesRead: () => bytesRead };
}

/** A server that ignores Range: a bounded streaming download, probed, then deleted. */
async function probeByDownload(url: string, options: RemoteProbeOptions, signal: AbortSignal): Promise<RemoteProbe> {
  await mkdir(options.tmpDir, { recursive: true });
  const file = path.join(options.tmpDir, `${randomUUID()}.part`);
  try {
    const { bytes } = await downloadVideo(url, file, {
      dispatcher: options.dispatcher,
      maxBytes: options.maxBytes,
      timeoutMs: options.timeoutMs,
      maxRedirects: options.maxRedirects,
      signal,
    });
    return { probe: await probeVideo(file), size: bytes, bytesRead: bytes, method: "download" };
  } finally {
    await removeFile(file);
  }
}

function totalOf(response: Response): number | undefined {
  const total = /\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1];
  return total === undefined ? undefined : Number(total);
}

/** A range answer's body, never more than asked for (a server may send the whole file with 206). */
async function readAtMost(response: Response, max: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!response.body) return new Uint8Array();
  for await (const chunk of response.body) {
    const bytes = chunk as Uint8Array;
    chunks.push(bytes.subarray(0, Math.max(0, max - total)));
    total += bytes.byteLength;
    if (total >= max) break;
  }
  return Buffer.concat(chunks);
}
