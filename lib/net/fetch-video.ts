import { open, unlink } from "node:fs/promises";
import { fetch, type Dispatcher, type Response } from "undici";
import { brandedError } from "../brand";
import { readWithin } from "../read-within";

/**
 * Downloads a video the way Meta's fetcher does (a plain GET), with the guards a server that
 * fetches user-supplied URLs needs: http(s) only, no credentials, bounded redirects followed by
 * hand so every hop goes through the dispatcher again, a deadline and a size cap. The dispatcher
 * (lib/net/public-agent.ts) checks each address it connects to.
 *
 * Error messages say what the user can fix and nothing about the network behind the URL: no
 * socket error, no address, no difference between a closed port, a refused address and a name
 * that does not resolve, so the fetcher cannot be used to map a network.
 */

export class VideoFetchError extends brandedError("dispatch.video-fetch-error") {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = "VideoFetchError";
  }
}

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
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Streams `url` into `destination`. Throws VideoFetchError with a reason a user can act on. */
export async function downloadVideo(url: string, destination: string, options: DownloadOptions): Promise<DownloadedVideo> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  try {
    return await downloadFollowingRedirects(new URL(url), destination, options, signal);
  } catch (error) {
    await unlink(destination).catch(() => {});
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (deadline.aborted) throw new VideoFetchError(`the download took longer than ${Math.round(options.timeoutMs / 1000)} s`, true);
    if (error instanceof VideoFetchError) throw error;
    throw new VideoFetchError(UNREACHABLE);
  }
}

async function downloadFollowingRedirects(start: URL, destination: string, options: DownloadOptions, signal: AbortSignal): Promise<DownloadedVideo> {
  let url = start;
  for (let hop = 0; ; hop++) {
    assertFetchableUrl(url);
    const response = await fetch(url, {
      redirect: "manual",
      signal,
      dispatcher: options.dispatcher,
      headers: { "user-agent": "facebookexternalhit/1.1 (Dispatch Graph sandbox)", accept: "video/mp4,video/quicktime,video/*;q=0.9,*/*;q=0.5" },
    });
    if (REDIRECTS.has(response.status)) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get("location");
      if (!location) throw new VideoFetchError(`the server answered HTTP ${response.status} without a Location header`);
      if (hop >= options.maxRedirects) throw new VideoFetchError(`more than ${options.maxRedirects} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new VideoFetchError(`the server answered HTTP ${response.status}`);
    }
    const contentType = response.headers.get("content-type");
    if (contentType && /^text\/html\b/i.test(contentType)) {
      await response.body?.cancel().catch(() => {});
      throw new VideoFetchError("the server answered with an HTML page, not a video (a login wall or a share page?)");
    }
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (declared > options.maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw new VideoFetchError(`the video is ${formatBytes(declared)}, over the ${formatBytes(options.maxBytes)} limit`);
    }
    const bytes = await writeBody(response, destination, options.maxBytes);
    if (bytes === 0) throw new VideoFetchError("the server answered with an empty body");
    return { bytes, contentType, finalHost: url.host };
  }
}

async function writeBody(response: Response, destination: string, maxBytes: number): Promise<number> {
  const file = await open(destination, "w");
  try {
    return await readWithin(response.body, maxBytes, () => new VideoFetchError(`the video is over the ${formatBytes(maxBytes)} limit`), (chunk) => file.write(chunk));
  } finally {
    await file.close();
  }
}

/** Refuses what Meta's fetcher could not or should not fetch; the dispatcher checks the addresses. */
export function assertFetchableUrl(url: URL): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new VideoFetchError(`${url.protocol} URLs are not fetched; use http or https`);
  if (url.username || url.password) throw new VideoFetchError("URLs with credentials are not fetched");
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}
