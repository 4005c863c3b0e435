import { VideoFetchError, discard, guardedFetch } from "../../net/guarded-fetch";
import { formatBytes } from "../../net/fetch-video";
import { OWN_FETCHER_HEADER } from "../../net/this-machine";
import { readWithin } from "../../read-within";
import { GraphError } from "../error";
import { REEL_PARAMETER_LIMITS } from "../reel-parameter-limits";
import { limitsOf, type SandboxDeps } from "./deps";
import { fetcherOf } from "./fetch-and-check";

/**
 * A reel's cover_url as Graph checks it when the container is made: fetched like an image_url (a
 * plain GET through the sandbox's connection policy), at most 8 MB, and a JPEG; each refusal with
 * Meta's code and subcode (9004/2207052, 36000/2207004, 36001/2207005).
 */

const COVER_REQUEST_HEADERS = {
  "user-agent": "facebookexternalhit/1.1 (Dispatch Graph sandbox)",
  accept: "image/jpeg,image/*;q=0.8,*/*;q=0.5",
  // A tenant's URL may lead back to this server: its control surface must not take this for a local caller.
  [OWN_FETCHER_HEADER]: "sandbox",
};
const MAX_BYTES = REEL_PARAMETER_LIMITS.maxCoverBytes;

class CoverTooLarge extends Error {}

export async function checkCoverImage(deps: SandboxDeps, url: string): Promise<void> {
  const limits = limitsOf(deps);
  let head: Uint8Array;
  try {
    head = await fetchCoverHead(deps, url, limits);
  } catch (error) {
    if (error instanceof CoverTooLarge) throw coverTooLarge();
    const reason = error instanceof VideoFetchError ? error.message : "the host could not be reached";
    throw new GraphError({
      code: 9004,
      subcode: 2207052,
      message: "The media could not be fetched from this uri: cover_url",
      userTitle: "Media download has failed",
      userMessage: `The cover image could not be downloaded: ${reason}.`,
    });
  }
  // JPEG files begin with the SOI marker and another marker: FF D8 FF.
  if (head.length < 3 || head[0] !== 0xff || head[1] !== 0xd8 || head[2] !== 0xff)
    throw new GraphError({
      code: 36001,
      subcode: 2207005,
      message: "The image format is not supported.",
      userTitle: "Unsupported image format",
      userMessage: "The image format is not supported. Supported formats are: JPEG",
    });
}

/** Downloads the cover within the size limit; answers its first bytes (the rest is only counted). */
async function fetchCoverHead(
  deps: SandboxDeps,
  url: string,
  limits: ReturnType<typeof limitsOf>,
): Promise<Uint8Array> {
  const { response } = await guardedFetch(new URL(url), {
    dispatcher: fetcherOf(deps),
    maxRedirects: limits.maxRedirects,
    signal: AbortSignal.timeout(limits.fetchTimeoutMs),
    headers: COVER_REQUEST_HEADERS,
  });
  if (!response.ok) {
    await discard(response);
    throw new VideoFetchError(`the server answered HTTP ${response.status}`);
  }
  if (Number(response.headers.get("content-length") ?? "0") > MAX_BYTES) {
    await discard(response);
    throw new CoverTooLarge();
  }
  const head: number[] = [];
  await readWithin(
    response.body,
    MAX_BYTES,
    () => new CoverTooLarge(),
    (chunk) => {
      for (let i = 0; i < chunk.length && head.length < 3; i++) head.push(chunk[i]!);
    },
  );
  return Uint8Array.from(head);
}

function coverTooLarge(): GraphError {
  return new GraphError({
    code: 36000,
    subcode: 2207004,
    message: "The image size is too large.",
    userTitle: "Image size too large",
    userMessage: `The image is too large to download. It should be less than ${formatBytes(MAX_BYTES)}.`,
  });
}
