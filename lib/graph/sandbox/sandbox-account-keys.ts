import { createHash } from "node:crypto";

/** The Redis keys of the sandbox's accounts, their tokens and their faults. Tokens are kept as digests only. */

/** The calls a fault can be queued for, by the control surface's names. */
export const FAULT_KINDS = ["media", "status", "media_publish", "upload", "refresh", "insights"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Accounts made through the control surface are forgotten a month after their last change. */
export const ACCOUNT_TTL_S = 30 * 24 * 60 * 60;

export const accountKeys = {
  profile: (accountId: string) => `sandbox:account:${accountId}:profile`,
  token: (digest: string) => `sandbox:token:${digest}`,
  fault: (accountId: string, kind: FaultKind) => `sandbox:account:${accountId}:fault:${kind}`,
  /**
   * zset of accounts made through the control surface for no tenant that no tenant has claimed
   * yet, by creation time: the login dialogs offer them to every signed-in tenant. (The key of the
   * zset that once held every made account: those were made for no one and claimed by no one.)
   */
  unclaimed: "sandbox:accounts",
  /** zset of the accounts a tenant holds: made for it, or claimed when its dialog issued a code for them. */
  held: (tenantId: string) => `sandbox:tenant:${tenantId}:accounts`,
};

export const digestOf = (token: string) => createHash("sha256").update(token).digest("hex");
