import type { ReelAccount } from "../config";

/** What a client may know of an account (lib/reels/account.ts): status, username, quota. Never its token. */
export type { AccountView } from "./account";

/** The tenant's configured account with that id; another tenant's account is as unknown as a missing one. */
export function findAccount(accounts: ReelAccount[], tenantId: string, accountId: string): ReelAccount | undefined {
  return accounts.find((a) => a.accountId === accountId && a.tenantId === tenantId);
}
