import { TOKEN_EXPIRING_WITHIN_DAYS, type AccountView } from "@/lib/accounts/account";
import { plural } from "../format";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Whole days left on a connected account's token when it expires within TOKEN_EXPIRING_WITHIN_DAYS
 * and Dispatch will not refresh it first: it does not refresh this kind of token, or its refreshes
 * failed (`token_refresh`). 0 once it has expired, which an account whose refreshes kept failing
 * still shows as connected until Graph refuses the token. Null otherwise (no expiry, far off, a
 * refresh still to come, or already needs reconnecting): with TOKEN_REFRESH_BEFORE_S under 7 days
 * a token Dispatch refreshes is that close to its expiry before its refresh is even tried.
 */
export function daysLeftToReconnect(
  account: Pick<AccountView, "status" | "token_expires_at" | "token_refresh">,
  now: number,
): number | null {
  if (account.status !== "connected" || !account.token_expires_at) return null;
  const left = Date.parse(account.token_expires_at) - now;
  if (!Number.isFinite(left) || left > TOKEN_EXPIRING_WITHIN_DAYS * DAY_MS) return null;
  if (left > 0 && account.token_refresh === "automatic") return null;
  return left <= 0 ? 0 : Math.ceil(left / DAY_MS);
}

/** "expires in 3 days", or "has expired" for 0 days left. */
export function expiryWords(daysLeft: number): string {
  return daysLeft === 0 ? "has expired" : `expires in ${plural(daysLeft, "day")}`;
}
