/**
 * The wait after `failures` failed tries: `baseMs` after the first, doubling with each further one,
 * up to `maxMs` (the exponent is capped, so a long run of failures stays a finite number). Shared by
 * the reel flow's Graph retries and waits and the webhook deliveries.
 */
export function backoff(policy: { baseMs: number; maxMs: number }, failures: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(failures - 1, 40));
}
