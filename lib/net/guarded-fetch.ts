import { fetch, type Dispatcher, type Response } from "undici";
import { brandedError } from "../brand";

/**
 * The one way Dispatch fetches a user-supplied URL (the sandbox's fetcher, the worker's preflight):
 * http(s) only, no credentials, redirects followed by hand so every hop is checked again and goes
 * through the dispatcher (lib/net/public-agent.ts), which checks each address it connects to.
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

export interface GuardedFetchOptions {
  /** Connects only where the address policy allows (createPublicAgent). */
  dispatcher: Dispatcher;
  maxRedirects: number;
  signal: AbortSignal;
  headers: Record<string, string>;
}

/** An answer that is not a redirect, and the URL that gave it (the last hop). */
export interface GuardedAnswer {
  response: Response;
  url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `start`, following at most `maxRedirects` redirects. Throws VideoFetchError with a reason a user can act on. */
export async function guardedFetch(start: URL, options: GuardedFetchOptions): Promise<GuardedAnswer> {
  let url = start;
  for (let hop = 0; ; hop++) {
    assertFetchableUrl(url);
    const response = await fetch(url, {
      redirect: "manual",
      signal: options.signal,
      dispatcher: options.dispatcher,
      headers: options.headers,
    });
    if (!REDIRECTS.has(response.status)) return { response, url };
    await discard(response);
    const location = response.headers.get("location");
    if (!location) throw new VideoFetchError(`the server answered HTTP ${response.status} without a Location header`);
    if (hop >= options.maxRedirects) throw new VideoFetchError(`more than ${options.maxRedirects} redirects`);
    url = new URL(location, url);
  }
}

/** Refuses what Meta's fetcher could not or should not fetch; the dispatcher checks the addresses. */
export function assertFetchableUrl(url: URL): void {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new VideoFetchError(`${url.protocol} URLs are not fetched; use http or https`);
  if (url.username || url.password) throw new VideoFetchError("URLs with credentials are not fetched");
}

/** Drops an answer's body unread. A body that fails to cancel is already gone with its connection: nothing to do. */
export async function discard(response: Response): Promise<void> {
  // The rest is not wanted; a cancel that fails means the stream is closed already.
  await response.body?.cancel().catch(() => {});
}
