import { createHash } from "node:crypto";
import type { SandboxDeps } from "../deps";
import { ACCOUNT_TTL_S, accountKeys, digestOf } from "../sandbox-account-keys";
import { listAccountsFor } from "../account-claims";
import { findSandboxAccount, type SandboxAccount } from "../sandbox-accounts";

/**
 * Facebook's side of the sandbox: one Facebook user (whoever logs in at its dialog) who manages a
 * Page for each of the sandbox's Instagram accounts, each Page linked to that account. So the
 * user has as many Pages with Instagram accounts as the sandbox has accounts, and the dialog lets
 * the person allow some of them, as Facebook Login for Business does. A user token carries the
 * Pages it was allowed (`pages` on its record); a Page token is a token of the linked account.
 */

export const SANDBOX_FACEBOOK_USER = { id: "100090000000001", name: "Sandbox Facebook User" } as const;

export interface SandboxPage {
  pageId: string;
  name: string;
  account: SandboxAccount;
}

const pageKey = (pageId: string) => `sandbox:facebook:page:${pageId}`;

/** The Page of an Instagram account: its id derived from the account's, so it stays the same. */
export function pageOf(account: SandboxAccount): SandboxPage {
  const digits = BigInt(
    `0x${createHash("sha256").update(`sandbox-page:${account.accountId}`).digest("hex").slice(0, 11)}`,
  );
  return { pageId: `1${digits.toString().padStart(14, "0")}`, name: `${account.username} Page`, account };
}

/** The Pages the dialog offers the tenant: one per account it may hold (account-claims.ts). */
export async function listSandboxPages(deps: SandboxDeps, tenantId: string): Promise<SandboxPage[]> {
  return (await listAccountsFor(deps, tenantId)).map(pageOf);
}

/** Remembers which account each allowed Page stands for, so a Page id resolves later. */
export async function rememberPages(deps: SandboxDeps, pages: readonly SandboxPage[]): Promise<void> {
  const multi = deps.redis.multi();
  for (const page of pages) multi.set(pageKey(page.pageId), page.account.accountId, "EX", ACCOUNT_TTL_S);
  await multi.exec();
}

export async function findSandboxPage(deps: SandboxDeps, pageId: string): Promise<SandboxPage | undefined> {
  if (!/^1\d{14}$/.test(pageId)) return undefined;
  const accountId = await deps.redis.get(pageKey(pageId));
  const account = accountId ? await findSandboxAccount(deps, accountId) : undefined;
  return account ? pageOf(account) : undefined;
}

/** Records the Pages a user token was allowed to see. */
export async function grantPages(deps: SandboxDeps, userToken: string, pageIds: readonly string[]): Promise<void> {
  await deps.redis.hset(accountKeys.token(digestOf(userToken)), "pages", pageIds.join(","));
}

/** The Pages a user token was allowed to see; empty for any other token. */
export async function grantedPages(deps: SandboxDeps, userToken: string): Promise<string[]> {
  const pages = await deps.redis.hget(accountKeys.token(digestOf(userToken)), "pages");
  return pages ? pages.split(",") : [];
}
