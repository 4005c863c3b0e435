import type { Redis } from "../../redis";
import type { ConnectedAccounts } from "../connected-accounts";
import type { AccountChoiceOption, LoginCaller } from "./login-callback";
import { readSessionBound, RECORD_ID_PATTERN, saveSessionBound, type ReadBoundRecord } from "./session-bound-record";

/**
 * The Instagram accounts a Facebook login offered, waiting for the person to pick: kept in Redis
 * (the picker page carries only the record's random id), bound to the session and tenant that
 * logged in, each Page token sealed as a connected account's is, taken once, gone after `ttlS`.
 */

export interface AccountCandidate extends AccountChoiceOption {
  accessToken: string;
}

type StoredOptions = (AccountChoiceOption & { sealedToken: string })[];

export type TakenChoice =
  { ok: true; chosen: AccountCandidate[] } | { ok: false; reason: "unknown" | "other-session" | "not-offered" };

export const CHOICE_ID_PATTERN = RECORD_ID_PATTERN;
const choiceKey = (choiceId: string) => `meta-login:choice:${choiceId}`;

type ChoiceDeps = { redis: Redis; accounts: Pick<ConnectedAccounts, "sealFor" | "openFor"> };

export async function saveAccountChoice(
  deps: ChoiceDeps,
  caller: LoginCaller,
  candidates: readonly AccountCandidate[],
  ttlS: number,
): Promise<string> {
  const options: StoredOptions = candidates.map(({ accessToken, ...option }) => ({
    ...option,
    sealedToken: deps.accounts.sealFor(option.accountId, accessToken),
  }));
  return saveSessionBound(deps.redis, choiceKey, caller, options, ttlS);
}

/** The accounts a choice offers, for its picker page: never their tokens; the choice stays. */
export async function readAccountChoice(
  redis: Redis,
  choiceId: string,
  caller: LoginCaller,
): Promise<ReadBoundRecord<AccountChoiceOption[]>> {
  const read = await readSessionBound<StoredOptions>(redis, choiceKey, choiceId, caller);
  if (!read.ok) return read;
  return {
    ok: true,
    value: read.value.map(({ accountId, username, pageName }) => ({ accountId, username, pageName })),
  };
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
  const read = await readSessionBound<StoredOptions>(deps.redis, choiceKey, choiceId, caller);
  if (!read.ok) return read;
  const offered = new Set(read.value.map((option) => option.accountId));
  if (picked.some((accountId) => !offered.has(accountId))) return { ok: false, reason: "not-offered" };
  // Whoever deletes it took it: a second submit of the same page finds nothing.
  if ((await deps.redis.del(choiceKey(choiceId))) !== 1) return { ok: false, reason: "unknown" };
  const chosen = read.value
    .filter((option) => picked.includes(option.accountId))
    .map(({ sealedToken, ...option }) => ({
      ...option,
      accessToken: deps.accounts.openFor(option.accountId, sealedToken),
    }))
    .filter((option): option is AccountCandidate => option.accessToken !== undefined);
  return { ok: true, chosen };
}
