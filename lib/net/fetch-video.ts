import { open } from "node:fs/promises";
import { removeFile } from "../remove-file";
import type { Dispatcher, Response } from "undici";
import { readWithin } from "../read-within";
import { discard, guardedFetch, VideoFetchError } from "./guarded-fetch";
import { OWN_FETCHER_HEADER } from "./this-machine";

/**
 * Downloads a video the way Meta's fetcher does (a plain GET) through guardedFetch, with a
 * deadline and a size cap.
 */

export interface DownloadOptions {
  /** Connects only where the address policy allows (createPublicAgent). */
  dispatcher: Dispatcher;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Aborts the download from outside (the attempt lost its container). */
  signal?: AbortSignal;
}

export interface DownloadedVideo {
  bytes: number;
  contentType: string | null;
  /** Host of the last hop; the only part of the URL safe to log (paths and queries may carry secrets). */
  finalHost: string;
}

const UNREACHABLE = "the host could not be reached, or it is not a public address";
/** Meta's fetcher's name, so a host that serves Meta serves the sandbox alike. */
const VIDEO_REQUEST_HEADERS = {
  "user-agent": "facebookexternalhit/1.1 (Dispatch Graph sandbox)",
  accept: "video/mp4,video/quicktime,video/*;q=0.9,*/*;q=0.5",
  [OWN_FETCHER_HEADER]: "sandbox",
};
export const NOT_A_VIDEO = "the server answered with an HTML page, not a video (a login wall or a share page?)";

/** Streams `url` into `destination`. Throws VideoFetchError with a reason a user can act on. */
export async function downloadVideo(
  url: string,
  destination: string,
  options: DownloadOptions,
): Promise<DownloadedVideo> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  try {
    return await downloadFollowingRedirects(new URL(url), destination, options, signal);
  } catch (error) {
    await removeFile(destination);
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (deadline.aborted)
      throw new VideoFetchError(`the download took longer than ${Math.round(options.timeoutMs / 1000)} s`, true);
    if (error instanceof VideoFetchError) throw error;
    throw new VideoFetchError(UNREACHABLE);
  }
}

async function downloadFollowingRedirects(
  start: URL,
  destination: string,
  options: DownloadOptions,
  signal: AbortSignal,
): Promise<DownloadedVideo> {
  const { response, url } = await guardedFetch(start, {
    dispatcher: options.dispatcher,
    maxRedirects: options.maxRedirects,
    signal,
    headers: VIDEO_REQUEST_HEADERS,
  });
  if (!response.ok) {
    await discard(response);
    throw new VideoFetchError(`the server answered HTTP ${response.status}`);
  }
  const contentType = response.headers.get("content-type");
  if (contentType && /^text\/html\b/i.test(contentType)) {
    await discard(response);
    throw new VideoFetchError(NOT_A_VIDEO);
  }
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > options.maxBytes) {
    await discard(response);
    throw new VideoFetchError(`the video is ${formatBytes(declared)}, over the ${formatBytes(options.maxBytes)} limit`);
  }
  const bytes = await writeBody(response, destination, options.maxBytes);
  if (bytes === 0) throw new VideoFetchError("the server answered with an empty body");
  return { bytes, contentType, finalHost: url.host };
}

async function writeBody(response: Response, destination: string, maxBytes: number): Promise<number> {
  const file = await open(destination, "w");
  try {
    return await readWithin(
      response.body,
      maxBytes,
      () => new VideoFetchError(`the video is over the ${formatBytes(maxBytes)} limit`),
      (chunk) => file.write(chunk),
    );
  } finally {
    await file.close();
  }
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}
