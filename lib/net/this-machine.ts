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
