import { backoff } from "../backoff";

export interface RetryPolicy {
  /** The wait after the first failed attempt; it doubles after each further failure. */
  baseMs: number;
  /** The longest wait between two attempts. */
  maxMs: number;
  /** A delivery is tried again until its first attempt (or its resend) is this old: at least 24 h by default. */
  windowMs: number;
}

/**
 * When to try again after `attempt` failed attempts, or null to give up: exponential, capped, with
 * jitter (a random point in the upper half of the wait) so a receiver that comes back is not hit by
 * every delivery at once.
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempt: number,
  retryFrom: number,
  now: number,
  random = Math.random,
): number | null {
  if (now - retryFrom >= policy.windowMs) return null;
  const wait = backoff(policy, attempt);
  return now + Math.round(wait / 2 + (random() * wait) / 2);
}
