import { randomBytes } from "node:crypto";
import type { Redis } from "../../redis";
import type { ConnectedAccounts } from "../connected-accounts";
import type { AccountChoiceOption, LoginCaller } from "./login-callback";
import { sameDigest } from "./login-state";

/**
 * The Instagram accounts a Facebook login offered, waiting for the person to pick: kept in Redis
 * (the picker page carries only the record's random id), bound to the session and tenant that
 * logged in, each Page token sealed as a connected account's is, taken once, gone after `ttlS`.
 */

export interface AccountCandidate extends AccountChoiceOption {
  accessToken: string;
}

interface StoredChoice {
  tenantId: string;
  binding: string;
  options: (AccountChoiceOption & { sealedToken: string })[];
}

export type TakenChoice =
  { ok: true; chosen: AccountCandidate[] } | { ok: false; reason: "unknown" | "other-session" | "not-offered" };

export const CHOICE_ID_PATTERN = /^[A-Za-z0-9_-]{32}$/;
const choiceKey = (choiceId: string) => `meta-login:choice:${choiceId}`;

type ChoiceDeps = { redis: Redis; accounts: Pick<ConnectedAccounts, "sealFor" | "openFor"> };

export async function saveAccountChoice(
  deps: ChoiceDeps,
  caller: LoginCaller,
  candidates: readonly AccountCandidate[],
  ttlS: number,
): Promise<string> {
  const choiceId = randomBytes(24).toString("base64url");
  const record: StoredChoice = {
    ...caller,
    options: candidates.map(({ accessToken, ...option }) => ({
      ...option,
      sealedToken: deps.accounts.sealFor(option.accountId, accessToken),
    })),
  };
  await deps.redis.set(choiceKey(choiceId), JSON.stringify(record), "EX", ttlS, "NX");
  return choiceId;
}

/**
 * Takes the choice for the accounts picked: refused, and left as it was, when another session
 * presents it or it names an account it did not offer; otherwise deleted, so it works once.
 */
export async function takeAccountChoice(
  deps: ChoiceDeps,
  choiceId: string,
  caller: LoginCaller,
  picked: readonly string[],
): Promise<TakenChoice> {
  if (!CHOICE_ID_PATTERN.test(choiceId)) return { ok: false, reason: "unknown" };
  const stored = await deps.redis.get(choiceKey(choiceId));
  if (stored === null) return { ok: false, reason: "unknown" };
  const record = JSON.parse(stored) as StoredChoice;
  if (record.tenantId !== caller.tenantId || !sameDigest(record.binding, caller.binding))
    return { ok: false, reason: "other-session" };
  const offered = new Set(record.options.map((option) => option.accountId));
  if (picked.some((accountId) => !offered.has(accountId))) return { ok: false, reason: "not-offered" };
  // Whoever deletes it took it: a second submit of the same page finds nothing.
  if ((await deps.redis.del(choiceKey(choiceId))) !== 1) return { ok: false, reason: "unknown" };
  const chosen = record.options
    .filter((option) => picked.includes(option.accountId))
    .map(({ sealedToken, ...option }) => ({
      ...option,
      accessToken: deps.accounts.openFor(option.accountId, sealedToken),
    }))
    .filter((option): option is AccountCandidate => option.accessToken !== undefined);
  return { ok: true, chosen };
}
