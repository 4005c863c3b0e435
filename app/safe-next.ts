/**
 * Where sign-in may send someone afterwards: a path on this site only (no scheme, no host, no
 * protocol-relative `//` or `/\\`), so the sign-in page cannot be used to send people elsewhere.
 */
export function safeNext(next: unknown, fallback = "/dashboard/jobs"): string {
  if (typeof next !== "string" || next.length > 2000) return fallback;
  return /^\/(?![/\\])[\w\-/.~%?=&+]*$/.test(next) ? next : fallback;
}

/** Set by proxy.ts on dashboard requests: the page that was asked for, for the sign-in redirect. */
export const REQUESTED_PATH_HEADER = "x-dispatch-requested-path";
