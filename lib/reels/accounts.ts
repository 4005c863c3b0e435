import type { ReelAccount } from "../config";

/** What a client may know of an account: its id and whether it publishes to the sandbox. Never its token. */
export interface AccountView {
  account_id: string;
  sandbox: boolean;
}

export function listAccounts(accounts: ReelAccount[], tenantId: string, sandbox: boolean): AccountView[] {
  return accounts.filter((a) => a.tenantId === tenantId).map((a) => ({ account_id: a.accountId, sandbox }));
}

/** The tenant's account with that id; another tenant's account is as unknown as a missing one. */
export function findAccount(accounts: ReelAccount[], tenantId: string, accountId: string): ReelAccount | undefined {
  return accounts.find((a) => a.accountId === accountId && a.tenantId === tenantId);
}
