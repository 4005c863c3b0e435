import { z } from "zod";
import type { InstagramLoginConfig } from "../../config";
import { ApiError } from "../../errors";
import type { Log } from "../../log";
import type { Redis } from "../../redis";
import type { ConnectedAccounts } from "../connected-accounts";
import { releaseWaitingPublications } from "../../reels/release-waiting-publications";
import { scheduleTokenRefresh } from "../token-refresh/token-refresh-queue";
import {
  exchangeCode,
  exchangeForLongLivedToken,
  MetaLoginError,
  readInstagramProfile,
  type LoginClientDeps,
} from "./instagram-login-client";
import { createLoginState, takeLoginState } from "./login-state";

/**
 * Instagram Login (OAuth 2.0 authorization code) for a signed-in tenant: `startInstagramLogin`
 * makes the dialog's address, `finishInstagramLogin` takes the callback and, only when every step
 * succeeded, stores the account with its sealed long-lived token and its expiry.
 */

export const INSTAGRAM_SCOPES = ["instagram_business_basic", "instagram_business_content_publish"] as const;

export interface InstagramLoginDeps extends LoginClientDeps {
  redis: Redis;
  accounts: ConnectedAccounts;
  login: InstagramLoginConfig;
  stateTtlS: number;
  log: Log;
  now?: () => number;
}

/** Who is connecting: the tenant and a digest of the session that started it. */
export interface LoginCaller {
  tenantId: string;
  binding: string;
}

/** The callback's query: a code and state, or Instagram's error parameters. */
export const instagramCallbackSchema = z.object({
  code: z.string().min(1).max(2048).optional(),
  state: z.string().max(128).optional(),
  error: z.string().max(200).optional(),
  error_reason: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});
export type InstagramCallback = z.infer<typeof instagramCallbackSchema>;

export type LoginOutcome =
  | { kind: "connected"; accountId: string; username: string | null }
  | { kind: "refused"; title: string; detail: string };

export async function startInstagramLogin(deps: InstagramLoginDeps, caller: LoginCaller): Promise<string> {
  const app = appOf(deps.login);
  const state = await createLoginState(
    deps.redis,
    { ...caller, provider: "instagram" },
    deps.stateTtlS,
    (deps.now ?? Date.now)(),
  );
  const dialog = new URL(deps.login.dialogUrl);
  dialog.search = new URLSearchParams({
    client_id: app.id,
    redirect_uri: deps.login.redirectUri,
    response_type: "code",
    scope: INSTAGRAM_SCOPES.join(","),
    state,
  }).toString();
  return dialog.toString();
}

const STATE_REFUSALS = {
  unknown: "This connection was not started here, or too long ago. Start again from the Accounts page.",
  replayed: "This connection link was already used. Start again from the Accounts page.",
  expired:
    "The connection took too long (it must finish within a few minutes of leaving for Instagram). Start again from the Accounts page.",
  "other-session": "This connection was started in another session. Start again from the Accounts page.",
} as const;

export async function finishInstagramLogin(
  deps: InstagramLoginDeps,
  caller: LoginCaller,
  callback: InstagramCallback,
): Promise<LoginOutcome> {
  const now = (deps.now ?? Date.now)();
  const taken = callback.state
    ? await takeLoginState(deps.redis, callback.state, caller, now)
    : ({ ok: false, reason: "unknown" } as const);
  if (!taken.ok) return { kind: "refused", title: "Nothing was connected", detail: STATE_REFUSALS[taken.reason] };
  if (callback.error) {
    const cancelled = callback.error === "access_denied";
    return {
      kind: "refused",
      title: cancelled ? "You cancelled at Instagram" : "Instagram did not connect the account",
      detail: cancelled ? "Nothing was connected." : `Instagram said: ${callback.error_description ?? callback.error}`,
    };
  }
  if (!callback.code)
    return { kind: "refused", title: "Nothing was connected", detail: "Instagram sent no authorization code." };
  try {
    return await connectWithCode(deps, caller, callback.code.replace(/#_$/, ""), now);
  } catch (error) {
    if (!(error instanceof MetaLoginError)) throw error;
    deps.log("warn", "instagram login failed", { tenant_id: caller.tenantId, error: error.stack });
    return { kind: "refused", title: "Instagram did not connect the account", detail: error.message };
  }
}

async function connectWithCode(
  deps: InstagramLoginDeps,
  caller: LoginCaller,
  code: string,
  now: number,
): Promise<LoginOutcome> {
  const login = { ...deps.login, app: appOf(deps.login) };
  const shortLived = await exchangeCode(deps, login, code);
  const longLived = await exchangeForLongLivedToken(deps, login, shortLived);
  const profile = await readInstagramProfile(deps, login, longLived.accessToken);
  const account = await deps.accounts.connect({
    tenantId: caller.tenantId,
    accountId: profile.userId,
    accessToken: longLived.accessToken,
    username: profile.username,
    tokenExpiresAt: new Date(now + longLived.expiresIn * 1000).toISOString(),
    graphUrl: deps.login.graphUrl,
    login: "instagram",
  });
  if (account === "taken")
    return {
      kind: "refused",
      title: "Nothing was connected",
      detail: "Another tenant has connected this Instagram account.",
    };
  if (profile.username) await deps.accounts.rememberUsername(profile.userId, profile.username);
  // Due at once: the scheduler decides from the token's expiry when it really is (token-refresh/).
  await scheduleTokenRefresh(deps.redis, profile.userId, now);
  await releaseWaitingPublications(deps.redis, profile.userId, now);
  return { kind: "connected", accountId: profile.userId, username: profile.username };
}

function appOf(login: InstagramLoginConfig): { id: string; secret: string } {
  if (!login.app)
    throw new ApiError(
      "unavailable",
      "Instagram Login is not configured: set INSTAGRAM_APP_ID and INSTAGRAM_APP_SECRET (and PUBLIC_URL).",
    );
  return login.app;
}
