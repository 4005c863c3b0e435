import type { InstagramLoginConfig } from "../../config";
import { exchangeCode, exchangeForLongLivedToken, readInstagramProfile } from "./instagram-login-client";
import type { LoginClientDeps } from "./meta-call";
import { scheduleTokenRefresh } from "../token-refresh/token-refresh-queue";
import {
  acceptLoginCallback,
  configuredApp,
  loginDialogAddress,
  metaCallbackSchema,
  nothingConnected,
  refusedOnMetaError,
  storeLoggedInAccount,
  type LoginCaller,
  type LoginFlowDeps,
  type LoginOutcome,
  type MetaCallback,
} from "./login-callback";

/**
 * Instagram Login (OAuth 2.0 authorization code) for a signed-in tenant: `startInstagramLogin`
 * makes the dialog's address, `finishInstagramLogin` takes the callback and, only when every step
 * succeeded, stores the account with its sealed long-lived token and its expiry.
 */

export type { LoginCaller, LoginOutcome };

/** Publishing, and insights (instagram_business_manage_insights: Meta refuses every insights read without it). */
export const INSTAGRAM_SCOPES = [
  "instagram_business_basic",
  "instagram_business_content_publish",
  "instagram_business_manage_insights",
] as const;

export interface InstagramLoginDeps extends LoginClientDeps, LoginFlowDeps {
  login: InstagramLoginConfig;
}

/** The callback's query: a code and state, or Instagram's error parameters. */
export const instagramCallbackSchema = metaCallbackSchema;
export type InstagramCallback = MetaCallback;

export async function startInstagramLogin(deps: InstagramLoginDeps, caller: LoginCaller): Promise<string> {
  return loginDialogAddress(deps, caller, "instagram", deps.login.dialogUrl, {
    client_id: configuredApp(deps.login, "instagram").id,
    redirect_uri: deps.login.redirectUri,
    response_type: "code",
    scope: INSTAGRAM_SCOPES.join(","),
  });
}

export async function finishInstagramLogin(
  deps: InstagramLoginDeps,
  caller: LoginCaller,
  callback: InstagramCallback,
): Promise<LoginOutcome> {
  const accepted = await acceptLoginCallback(deps, caller, "instagram", callback);
  if ("refused" in accepted) return accepted.refused;
  return refusedOnMetaError(deps.log, "instagram", caller, () =>
    connectWithCode(deps, caller, accepted.code, accepted.now),
  );
}

async function connectWithCode(
  deps: InstagramLoginDeps,
  caller: LoginCaller,
  code: string,
  now: number,
): Promise<LoginOutcome> {
  const login = { ...deps.login, app: configuredApp(deps.login, "instagram") };
  const shortLived = await exchangeCode(deps, login, code);
  const longLived = await exchangeForLongLivedToken(deps, login, shortLived);
  const profile = await readInstagramProfile(deps, login, longLived.accessToken);
  const stored = await storeLoggedInAccount(
    deps,
    caller,
    {
      accountId: profile.userId,
      accessToken: longLived.accessToken,
      username: profile.username,
      tokenExpiresAt: new Date(now + longLived.expiresIn * 1000).toISOString(),
      graphUrl: deps.login.graphUrl,
      login: "instagram",
    },
    now,
  );
  if (stored === "taken") return nothingConnected("Another tenant has connected this Instagram account.");
  // Due at once: the scheduler decides from the token's expiry when it really is (token-refresh/).
  await scheduleTokenRefresh(deps.redis, profile.userId, now);
  return { kind: "connected", accountId: profile.userId, username: profile.username };
}
