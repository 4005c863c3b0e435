import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { open, unlink } from "node:fs/promises";
import { isIP } from "node:net";

/**
 * Downloads a video the way Meta's fetcher does (a plain GET), with the guards a server that
 * fetches user-supplied URLs needs: http(s) only, no credentials, bounded redirects followed by
 * hand so every hop is checked again, a deadline, a size cap, and no private addresses.
 *
 * Residual risk: the address is checked after our own DNS lookup and fetch resolves again, so a
 * rebinding DNS server could still swap the answer in between. Pinning the address needs an
 * HTTP agent fetch does not expose; this is a sandbox, and production points GRAPH_URL at Meta.
 */

export class VideoFetchError extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = "VideoFetchError";
  }
}

export interface DownloadOptions {
  fetch: typeof fetch;
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  lookup?: (hostname: string) => Promise<LookupAddress[]>;
  /** Aborts the download from outside (the attempt lost its container). */
  signal?: AbortSignal;
}

export interface DownloadedVideo {
  bytes: number;
  contentType: string | null;
  /** Host of the last hop; the only part of the URL safe to log (paths and queries may carry secrets). */
  finalHost: string;
}

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
    throw new VideoFetchError(`the request failed (${describeNetworkError(error)})`);
  }
}

async function downloadFollowingRedirects(start: URL, destination: string, options: DownloadOptions, signal: AbortSignal): Promise<DownloadedVideo> {
  let url = start;
  for (let hop = 0; ; hop++) {
    await assertFetchableUrl(url, options);
    const response = await options.fetch(url, {
      redirect: "manual",
      signal,
      headers: { "user-agent": "facebookexternalhit/1.1 (Dispatch Graph sandbox)", accept: "video/mp4,video/quicktime,video/*;q=0.9,*/*;q=0.5" },
    });
    if (REDIRECTS.has(response.status)) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get("location");
      if (!location) throw new VideoFetchError(`${url.host} answered HTTP ${response.status} without a Location header`);
      if (hop >= options.maxRedirects) throw new VideoFetchError(`more than ${options.maxRedirects} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new VideoFetchError(`${url.host} answered HTTP ${response.status}`);
    }
    const contentType = response.headers.get("content-type");
    if (contentType && /^text\/html\b/i.test(contentType)) {
      await response.body?.cancel().catch(() => {});
      throw new VideoFetchError(`${url.host} answered with an HTML page, not a video (a login wall or a share page?)`);
    }
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (declared > options.maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw new VideoFetchError(`the video is ${formatBytes(declared)}, over the ${formatBytes(options.maxBytes)} limit`);
    }
    const bytes = await writeBody(response, destination, options.maxBytes);
    if (bytes === 0) throw new VideoFetchError(`${url.host} answered with an empty body`);
    return { bytes, contentType, finalHost: url.host };
  }
}

async function writeBody(response: Response, destination: string, maxBytes: number): Promise<number> {
  const file = await open(destination, "w");
  let total = 0;
  try {
    if (!response.body) return 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new VideoFetchError(`the video is over the ${formatBytes(maxBytes)} limit`);
      }
      await file.write(value);
    }
    return total;
  } finally {
    await file.close();
  }
}

/** Refuses what Meta's fetcher could not or should not fetch. Exported for the create-time checks. */
export async function assertFetchableUrl(url: URL, options: Pick<DownloadOptions, "allowPrivate" | "lookup">): Promise<void> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new VideoFetchError(`${url.protocol} URLs are not fetched; use http or https`);
  if (url.username || url.password) throw new VideoFetchError("URLs with credentials are not fetched");
  if (options.allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (/^localhost$|\.localhost$/i.test(host)) throw new VideoFetchError(`${host} is a private address`);
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new VideoFetchError(`${host} is a private address`);
    return;
  }
  const blocked = (await resolve(host, options.lookup)).find(isPrivateAddress);
  if (blocked) throw new VideoFetchError(`${host} resolves to a private address (${blocked})`);
}

async function resolve(host: string, lookup: DownloadOptions["lookup"]): Promise<string[]> {
  try {
    const answers = lookup ? await lookup(host) : await lookupAll(host);
    if (answers.length === 0) throw new Error("no addresses");
    return answers.map((a) => a.address);
  } catch {
    throw new VideoFetchError(`the host ${host} could not be resolved`);
  }
}

function lookupAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolvePromise, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolvePromise(addresses)));
  });
}

/** Loopback, private, link-local (cloud metadata), carrier-grade NAT, multicast, reserved and documentation ranges. */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return isPrivateIPv4(address);
  if (version !== 6) return true;
  const words = expandIPv6(address);
  if (!words) return true;
  const [w0 = 0, w1 = 0] = words;
  const allZeroUntil = (n: number) => words.slice(0, n).every((w) => w === 0);
  if (allZeroUntil(7) && (words[7] === 0 || words[7] === 1)) return true; // :: and ::1
  if (allZeroUntil(5) && words[5] === 0xffff) return isPrivateIPv4(wordsToIPv4(words)); // IPv4-mapped
  if (w0 === 0x64 && w1 === 0xff9b && words.slice(2, 6).every((w) => w === 0)) return isPrivateIPv4(wordsToIPv4(words)); // NAT64
  if (allZeroUntil(6)) return true; // deprecated IPv4-compatible
  if ((w0 & 0xfe00) === 0xfc00) return true; // unique local, fc00::/7 (includes AWS's fd00:ec2::254)
  if ((w0 & 0xffc0) === 0xfe80) return true; // link-local
  if ((w0 & 0xff00) === 0xff00) return true; // multicast
  if (w0 === 0x2001 && w1 === 0x0db8) return true; // documentation
  if (w0 === 0x0100 && words.slice(1, 4).every((w) => w === 0)) return true; // discard 100::/64
  return false;
}

const PRIVATE_IPV4: [number, number][] = [
  [0x00000000, 8], // "this network"
  [0x0a000000, 8],
  [0x64400000, 10], // carrier-grade NAT
  [0x7f000000, 8],
  [0xa9fe0000, 16], // link-local, 169.254.169.254 metadata
  [0xac100000, 12],
  [0xc0000000, 24],
  [0xc0000200, 24],
  [0xc0a80000, 16],
  [0xc6120000, 15], // benchmarking
  [0xc6336400, 24],
  [0xcb007100, 24],
  [0xe0000000, 4], // multicast
  [0xf0000000, 4], // reserved and broadcast
];

function isPrivateIPv4(address: string): boolean {
  const value = address.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
  return PRIVATE_IPV4.some(([base, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

function expandIPv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const parts = v4[1].split(".").map(Number);
    text = `${text.slice(0, -v4[1].length)}${(((parts[0] ?? 0) << 8) | (parts[1] ?? 0)).toString(16)}:${(((parts[2] ?? 0) << 8) | (parts[3] ?? 0)).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headWords = head ? head.split(":") : [];
  const tailWords = tail ? tail.split(":") : [];
  const missing = 8 - headWords.length - tailWords.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  const words = [...headWords, ...Array<string>(Math.max(0, missing)).fill("0"), ...tailWords].map((w) => Number.parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

function wordsToIPv4(words: number[]): string {
  const hi = words[6] ?? 0;
  const lo = words[7] ?? 0;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}
