/**
 * Who is calling from this machine. A few surfaces answer only callers here (the sandbox's control
 * surface, /metrics without a token); the same rule decides for each of them.
 */

/** A loopback address: 127.0.0.0/8 (plain or IPv4-mapped) or ::1. */
export const isLoopback = (address: string) => address === "::1" || /^(::ffff:)?127\./.test(address);

/**
 * A loopback peer, and loopback every address a proxy forwarded for: Next itself adds the peer to
 * X-Forwarded-For, and a proxy on this machine adds the client it serves, so one remote entry
 * anywhere in the list means the request came from elsewhere.
 */
export function fromThisMachine(peer: string | null | undefined, forwardedFor: string | null | undefined): boolean {
  const forwarded = forwardedFor?.split(",").map((entry) => entry.trim()) ?? [];
  return !!peer && isLoopback(peer.trim()) && forwarded.every(isLoopback);
}

/**
 * Set on every request Dispatch's own fetchers send (the sandbox's video download, the
 * preflight's range requests): a URL a tenant chose may lead them back to this server, and a
 * surface that trusts this machine must not trust them.
 */
export const OWN_FETCHER_HEADER = "x-dispatch-fetcher";

/** What a browser says of where a request comes from; null where a header is absent. */
export interface RequestSite {
  fetchSite: string | null;
  origin: string | null;
  host: string | null;
}

/**
 * Whether a browser sent this for a page of another site: `Sec-Fetch-Site` other than
 * same-origin or none (typed in), else an `Origin` whose host is not the `Host` asked for
 * (`Origin: null` included). A surface that trusts this machine must not trust the pages its
 * browser shows: a form or a text/plain fetch from any of them reaches 127.0.0.1 without a preflight.
 */
export function fromAnotherSite({ fetchSite, origin, host }: RequestSite): boolean {
  if (fetchSite) return fetchSite !== "same-origin" && fetchSite !== "none";
  if (!origin) return false;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}
