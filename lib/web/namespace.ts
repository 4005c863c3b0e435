/**
 * Reels, accounts and uploads answer at /v1/… and, deprecated, at /api/… where they began, from the
 * same handlers. The links an answer carries (Location, span names) stay in the namespace the
 * request came in on, so a client of the old paths is never moved to the new ones behind its back.
 */
export type ApiNamespace = "/v1" | "/api";

/** `/api` for a request to a deprecated /api path, else `/v1`. */
export function namespaceOf(request: Request): ApiNamespace {
  return new URL(request.url).pathname.startsWith("/api/") ? "/api" : "/v1";
}
