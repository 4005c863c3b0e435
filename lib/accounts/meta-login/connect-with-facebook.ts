import type { FacebookLoginConfig } from "../../config";
import type { Redis } from "../../redis";
import {
  exchangeFacebookCode,
  exchangeForLongLivedUserToken,
  listFacebookPages,
  readLinkedInstagramAccount,
} from "./facebook-login-client";
import type { LoginClientDeps } from "./meta-call";
import { readAccountChoice, saveAccountChoice, takeAccountChoice, type AccountCandidate } from "./account-choice";
import type { AccountChoiceForm } from "./account-choice-form";
import {
  acceptLoginCallback,
  configuredApp,
  loginDialogAddress,
  nothingConnected,
  refusedOnMetaError,
  storeLoggedInAccount,
  type LoginCaller,
  type LoginFlowDeps,
  type LoginOutcome,
  type LoginRefusal,
  type MetaCallback,
} from "./login-callback";

/**
 * Facebook Login for Business for a signed-in tenant: the Instagram professional accounts linked
 * to the Pages the person allows. One such account is connected at once; several are offered in
 * a picker (account-choice.ts). Each is stored with its Page token (which, got from a long-lived
 * user token, does not expire) and publishes through the Facebook Graph host.
 */

export const FACEBOOK_SCOPES = [
  "instagram_basic",
  "instagram_content_publish",
  // Insights need it and pages_read_engagement: Meta refuses every insights read without them.
  "instagram_manage_insights",
  "pages_show_list",
  "pages_read_engagement",
  "business_management",
] as const;

/** Where the picker page posts the accounts picked. */
export const FACEBOOK_CHOICE_PATH = "/api/accounts/connect/facebook/choose";

export interface FacebookLoginDeps extends LoginClientDeps, LoginFlowDeps {
  login: FacebookLoginConfig;
}

export async function startFacebookLogin(deps: FacebookLoginDeps, caller: LoginCaller): Promise<string> {
  return loginDialogAddress(deps, caller, "facebook", deps.login.dialogUrl, {
    client_id: configuredApp(deps.login, "facebook").id,
    redirect_uri: deps.login.redirectUri,
    scope: FACEBOOK_SCOPES.join(","),
  });
}

export async function finishFacebookLogin(
  deps: FacebookLoginDeps,
  caller: LoginCaller,
  callback: MetaCallback,
): Promise<LoginOutcome> {
  const accepted = await acceptLoginCallback(deps, caller, "facebook", callback);
  if ("refused" in accepted) return accepted.refused;
  return refusedOnMetaError(deps.log, "facebook", caller, async () => {
    const candidates = await linkedAccountsOf(deps, accepted.code);
    if (candidates.length === 0)
      return nothingConnected(
        "None of the Pages you allowed has an Instagram professional account linked to it. Link one to a Page, then start again from the Accounts page.",
      );
    if (candidates.length === 1) return connectChosen(deps, caller, candidates, accepted.now);
    const choiceId = await saveAccountChoice(deps, caller, candidates, deps.stateTtlS);
    const options = candidates.map(({ accountId, username, pageName }) => ({ accountId, username, pageName }));
    return { kind: "choose", choiceId, options };
  });
}

/** Code → user token → long-lived user token → its Pages → the Instagram account of each (Pages without one left out). */
async function linkedAccountsOf(deps: FacebookLoginDeps, code: string): Promise<AccountCandidate[]> {
  const login = { ...deps.login, app: configuredApp(deps.login, "facebook") };
  const userToken = await exchangeFacebookCode(deps, login, code);
  // Page tokens got with a long-lived user token do not expire; with the short-lived one they would in an hour.
  const longLived = await exchangeForLongLivedUserToken(deps, login, userToken);
  const pages = await listFacebookPages(deps, login, longLived);
  const linked = await Promise.all(pages.map((page) => readLinkedInstagramAccount(deps, login, page)));
  const candidates = new Map<string, AccountCandidate>();
  pages.forEach((page, i) => {
    const account = linked[i];
    if (account && !candidates.has(account.accountId))
      candidates.set(account.accountId, { ...account, pageName: page.name, accessToken: page.accessToken });
  });
  return [...candidates.values()];
}

const CHOICE_REFUSALS = {
  unknown: "This choice was already made, or it is too old. Start again from the Accounts page.",
  "other-session": "This choice belongs to another session. Start again from the Accounts page.",
  "not-offered": "The form named an account that was not offered. Start again from the Accounts page.",
} as const;

/** The picker page's accounts (never their tokens), or the refusal that says why there is nothing to pick. */
export async function offeredAccounts(
  redis: Redis,
  choiceId: unknown,
  caller: LoginCaller | undefined,
): Promise<Extract<LoginOutcome, { kind: "choose" }> | LoginRefusal> {
  if (typeof choiceId !== "string" || !caller) return nothingConnected(CHOICE_REFUSALS.unknown);
  const read = await readAccountChoice(redis, choiceId, caller);
  if (!read.ok) return nothingConnected(CHOICE_REFUSALS[read.reason]);
  return { kind: "choose", choiceId, options: read.value };
}

/** The picker's answer: connects the accounts ticked, once; nothing when none is. */
export async function finishFacebookChoice(
  deps: FacebookLoginDeps,
  caller: LoginCaller,
  form: AccountChoiceForm,
): Promise<LoginOutcome> {
  // Left untouched, so going back to the picker still works.
  if (form.account_id.length === 0)
    return nothingConnected(
      "No account was ticked. Go back and tick at least one, or start again from the Accounts page.",
    );
  const taken = await takeAccountChoice(deps, form.choice, caller, form.account_id);
  if (!taken.ok) return nothingConnected(CHOICE_REFUSALS[taken.reason]);
  if (taken.chosen.length === 0) return nothingConnected(CHOICE_REFUSALS.unknown);
  return connectChosen(deps, caller, taken.chosen, (deps.now ?? Date.now)());
}

async function connectChosen(
  deps: FacebookLoginDeps,
  caller: LoginCaller,
  chosen: readonly AccountCandidate[],
  now: number,
): Promise<LoginOutcome> {
  const connected: AccountCandidate[] = [];
  const taken: AccountCandidate[] = [];
  for (const candidate of chosen) {
    const { accountId, username, accessToken } = candidate;
    const stored = await storeLoggedInAccount(
      deps,
      caller,
      { accountId, username, accessToken, tokenExpiresAt: null, graphUrl: deps.login.graphUrl, login: "facebook" },
      now,
    );
    (stored === "taken" ? taken : connected).push(candidate);
  }
  const [first] = connected;
  if (first && taken.length === 0) return { kind: "connected", accountId: first.accountId, username: first.username };
  const held = `Another tenant has connected ${taken.map((a) => (a.username ? `@${a.username}` : a.accountId)).join(", ")}.`;
  if (!first) return nothingConnected(held);
  return { kind: "refused", title: "Not every account was connected", detail: `${held} The others were connected.` };
}
