import { createHash } from "node:crypto";
import type { FaultKind } from "./sandbox-accounts";

/** The Redis keys of the sandbox's accounts, their tokens and their faults. Tokens are kept as digests only. */

/** Accounts made through the control surface are forgotten a month after their last change. */
export const ACCOUNT_TTL_S = 30 * 24 * 60 * 60;

export const accountKeys = {
  profile: (accountId: string) => `sandbox:account:${accountId}:profile`,
  token: (digest: string) => `sandbox:token:${digest}`,
  fault: (accountId: string, kind: FaultKind) => `sandbox:account:${accountId}:fault:${kind}`,
  /** zset of accounts made through the control surface, by creation time: the login dialog lists them. */
  made: "sandbox:accounts",
};

export const digestOf = (token: string) => createHash("sha256").update(token).digest("hex");
