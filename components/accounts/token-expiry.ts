import { TOKEN_EXPIRING_WITHIN_DAYS, type AccountView } from "@/lib/accounts/account";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Whole days (at least 1) left on a connected account's token when it expires within
 * TOKEN_EXPIRING_WITHIN_DAYS: by then Dispatch would have refreshed it, so it could not, and the
 * account should be reconnected. Null otherwise (no expiry, far off, or already needs reconnecting).
 */
export function daysLeftToReconnect(
  account: Pick<AccountView, "status" | "token_expires_at">,
  now: number,
): number | null {
  if (account.status !== "connected" || !account.token_expires_at) return null;
  const left = Date.parse(account.token_expires_at) - now;
  if (!Number.isFinite(left) || left > TOKEN_EXPIRING_WITHIN_DAYS * DAY_MS) return null;
  return Math.max(1, Math.ceil(left / DAY_MS));
}
