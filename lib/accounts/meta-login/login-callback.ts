import { z } from "zod";
import { ApiError } from "../../errors";
import type { Log } from "../../log";
import type { Redis } from "../../redis";
import type { ConnectedAccounts, TokenDetails } from "../connected-accounts";
import { releaseWaitingPublications } from "../../reels/release-waiting-publications";
import { MetaLoginError } from "./meta-call";
import { createLoginState, takeLoginState, type LoginProvider } from "./login-state";

/**
 * What both of Meta's logins (Instagram Login, Facebook Login for Business) do the same way around
 * their own calls: the dialog's address with a fresh state, the callback's state taken once and
 * its cancel or error read, Meta's refusals turned into a page, and the account stored.
 */

/** Who is connecting: the tenant and a digest of the session that started it. */
export interface LoginCaller {
  tenantId: string;
  binding: string;
}

/** The callback's query: a code and state, or Meta's error parameters. */
export const metaCallbackSchema = z.object({
  code: z.string().min(1).max(2048).optional(),
  state: z.string().max(128).optional(),
  error: z.string().max(200).optional(),
  error_code: z.string().max(20).optional(),
  error_reason: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});
export type MetaCallback = z.infer<typeof metaCallbackSchema>;

/** One Instagram account a Facebook login may connect, shown in the picker (never its token). */
export interface AccountChoiceOption {
  accountId: string;
  username: string | null;
  pageName: string;
}

export type LoginOutcome =
  | { kind: "connected"; accountId: string; username: string | null }
  /** Several accounts came back: the person picks, with `choiceId` naming the server-side record. */
  | { kind: "choose"; choiceId: string; options: AccountChoiceOption[] }
  | { kind: "refused"; title: string; detail: string };
export type LoginRefusal = Extract<LoginOutcome, { kind: "refused" }>;

export interface LoginFlowDeps {
  redis: Redis;
  accounts: ConnectedAccounts;
  stateTtlS: number;
  log: Log;
  now?: () => number;
}

export const PROVIDER_NAMES: Record<LoginProvider, string> = { instagram: "Instagram", facebook: "Facebook" };

/** The dialog's address: `params` and a new state bound to the caller. */
export async function loginDialogAddress(
  deps: Pick<LoginFlowDeps, "redis" | "stateTtlS" | "now">,
  caller: LoginCaller,
  provider: LoginProvider,
  dialogUrl: string,
  params: Record<string, string>,
): Promise<string> {
  const state = await createLoginState(deps.redis, { ...caller, provider }, deps.stateTtlS, (deps.now ?? Date.now)());
  const dialog = new URL(dialogUrl);
  dialog.search = new URLSearchParams({ ...params, state }).toString();
  return dialog.toString();
}

const stateRefusals = (name: string) =>
  ({
    unknown: "This connection was not started here, or too long ago. Start again from the Accounts page.",
    replayed: "This connection link was already used. Start again from the Accounts page.",
    expired: `The connection took too long (it must finish within a few minutes of leaving for ${name}). Start again from the Accounts page.`,
    "other-session": "This connection was started in another session. Start again from the Accounts page.",
  }) as const;

/** Takes the callback's state (once, whatever follows) and answers its code, or the page that says why nothing happens. */
export async function acceptLoginCallback(
  deps: Pick<LoginFlowDeps, "redis" | "now">,
  caller: LoginCaller,
  provider: LoginProvider,
  callback: MetaCallback,
): Promise<{ code: string; now: number } | { refused: LoginRefusal }> {
  const name = PROVIDER_NAMES[provider];
  const now = (deps.now ?? Date.now)();
  const taken = callback.state
    ? await takeLoginState(deps.redis, callback.state, { ...caller, provider }, now)
    : ({ ok: false, reason: "unknown" } as const);
  if (!taken.ok) return { refused: nothingConnected(stateRefusals(name)[taken.reason]) };
  if (callback.error) {
    const cancelled = callback.error === "access_denied";
    return {
      refused: {
        kind: "refused",
        title: cancelled ? `You cancelled at ${name}` : `${name} did not connect the account`,
        detail: cancelled ? "Nothing was connected." : `${name} said: ${callback.error_description ?? callback.error}`,
      },
    };
  }
  if (!callback.code) return { refused: nothingConnected(`${name} sent no authorization code.`) };
  // Instagram appends #_ to its redirect, and a browser may keep it on the code.
  return { code: callback.code.replace(/#_$/, ""), now };
}

export function nothingConnected(detail: string): LoginRefusal {
  return { kind: "refused", title: "Nothing was connected", detail };
}

/** Runs a login's calls to Meta: a refusal of Meta's (or Meta out of reach) becomes the page that says so. */
export async function refusedOnMetaError(
  log: Log,
  provider: LoginProvider,
  caller: LoginCaller,
  connect: () => Promise<LoginOutcome>,
): Promise<LoginOutcome> {
  try {
    return await connect();
  } catch (error) {
    if (!(error instanceof MetaLoginError)) throw error;
    log("warn", `${provider} login failed`, { tenant_id: caller.tenantId, error: error.stack });
    return { kind: "refused", title: `${PROVIDER_NAMES[provider]} did not connect the account`, detail: error.message };
  }
}

/** An account Meta's login vouched for, with the token to store sealed. */
export interface LoggedInAccount extends Required<Pick<TokenDetails, "tokenExpiresAt" | "graphUrl" | "login">> {
  accountId: string;
  username: string | null;
  accessToken: string;
}

/** Stores the account for the caller's tenant and lets its waiting publications go on; "taken" when another tenant holds it. */
export async function storeLoggedInAccount(
  deps: Pick<LoginFlowDeps, "redis" | "accounts">,
  caller: LoginCaller,
  account: LoggedInAccount,
  now: number,
): Promise<"connected" | "taken"> {
  const stored = await deps.accounts.connect({ tenantId: caller.tenantId, ...account });
  if (stored === "taken") return "taken";
  if (account.username) await deps.accounts.rememberUsername(account.accountId, account.username);
  await releaseWaitingPublications(deps.redis, account.accountId, now);
  return "connected";
}

/** The app a login runs as; 503 until it is configured (the sandbox has its own). */
export function configuredApp(
  login: { app: { id: string; secret: string } | undefined },
  provider: LoginProvider,
): { id: string; secret: string } {
  if (login.app) return login.app;
  const prefix = provider.toUpperCase();
  const what = provider === "instagram" ? "Instagram Login" : "Facebook Login for Business";
  throw new ApiError(
    "unavailable",
    `${what} is not configured: set ${prefix}_APP_ID and ${prefix}_APP_SECRET (and PUBLIC_URL).`,
  );
}
