import { createHash, randomBytes } from "node:crypto";
import type { SandboxDeps } from "../deps";

/**
 * The authorization codes the sandbox's login dialog hands out: single use, valid an hour (as
 * Instagram's), bound to the app and the redirect_uri they were issued for. Kept as digests.
 */

export const CODE_LIFETIME_MS = 60 * 60 * 1000;

const codeKey = (code: string) => `sandbox:oauth:code:${createHash("sha256").update(code).digest("hex")}`;

export interface LoginCode {
  appId: string;
  redirectUri: string;
  /** Who logged in: the Instagram account, or with Facebook Login the sandbox's Facebook user. */
  accountId: string;
  /** Facebook Login: the Pages the person allowed the app to see. */
  pageIds?: string[];
  /** The permissions the person allowed (asked for and left ticked); the tokens made from the code carry them. */
  scopes: string[];
  issuedAt: number;
}

export async function issueLoginCode(deps: SandboxDeps, grant: Omit<LoginCode, "issuedAt">): Promise<string> {
  const code = randomBytes(24).toString("base64url");
  const key = codeKey(code);
  // Kept past its life so a late exchange is told "expired" rather than "not found".
  await deps.redis
    .multi()
    .hset(
      key,
      "app_id",
      grant.appId,
      "redirect_uri",
      grant.redirectUri,
      "account_id",
      grant.accountId,
      "page_ids",
      (grant.pageIds ?? []).join(","),
      "scopes",
      grant.scopes.join(" "),
      "issued_at",
      String(deps.now()),
    )
    .pexpire(key, CODE_LIFETIME_MS * 2)
    .exec();
  return code;
}

// Marks the code used and answers its fields; 'used' when it was already; nil when unknown.
const REDEEM = `
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return nil end
if redis.call('HSETNX', KEYS[1], 'used', '1') == 0 then return 'used' end
return fields`;

export type Redeemed = LoginCode | "unknown" | "used" | "expired";

/** Takes the code: it works once, whatever the outcome of the exchange it is presented with. */
export async function redeemLoginCode(deps: SandboxDeps, code: string): Promise<Redeemed> {
  const answer = (await deps.redis.eval(REDEEM, 1, codeKey(code))) as string[] | "used" | null;
  if (answer === null) return "unknown";
  if (answer === "used") return "used";
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < answer.length; i += 2) fields[answer[i]!] = answer[i + 1]!;
  const issuedAt = Number(fields.issued_at);
  if (deps.now() - issuedAt > CODE_LIFETIME_MS) return "expired";
  return {
    appId: fields.app_id ?? "",
    redirectUri: fields.redirect_uri ?? "",
    accountId: fields.account_id ?? "",
    pageIds: fields.page_ids ? fields.page_ids.split(",") : [],
    scopes: (fields.scopes ?? "").split(" ").filter(Boolean),
    issuedAt,
  };
}
