import { GraphError } from "../../error";
import type { SandboxDeps } from "../deps";
import {
  accessTokenOf,
  graphErrorResponse,
  graphJson,
  invalidParameter,
  invalidToken,
  pickFields,
  requestedFields,
  unsupportedRequest,
  type GraphCall,
} from "../graph-request";
import { deadTokenError, issueToken, resolveToken } from "../sandbox-tokens";
import { findSandboxPage, grantedPages, grantPages, SANDBOX_FACEBOOK_USER, type SandboxPage } from "./facebook-pages";
import { redeemLoginCode } from "./login-codes";
import { LONG_LIVED_S } from "../sandbox-tokens";
import { SHORT_LIVED_MS } from "./login-tokens";

/**
 * Facebook Login for Business's Graph endpoints, in Meta's shapes, with Graph error objects:
 *   GET /{version}/oauth/access_token?client_id&redirect_uri&client_secret&code     → a user token (an hour)
 *   GET /{version}/oauth/access_token?grant_type=fb_exchange_token&client_id&client_secret&fb_exchange_token
 *                                                                                   → a long-lived user token (60 days)
 *   GET /{version}/me/accounts                                                      → the allowed Pages, with Page tokens
 *   GET /{version}/{page-id}?fields=instagram_business_account{id,username}         → the Page's Instagram account
 * A Page token got with a long-lived user token does not expire; with a short-lived one it lasts an hour.
 */

const refused = (code: number, message: string, subcode?: number) =>
  new GraphError({ code, subcode, message, status: 400, isTransient: false });

export async function exchangeFacebookToken(deps: SandboxDeps, params: Record<string, string>): Promise<Response> {
  try {
    const app = deps.config.FACEBOOK_LOGIN.app;
    if (!params.client_id) throw refused(101, "Missing client_id parameter.");
    if (!app || params.client_id !== app.id)
      throw refused(101, "Error validating application. Invalid application ID.");
    if (params.client_secret !== app.secret) throw refused(1, "Error validating client secret.");
    const answer =
      params.grant_type === "fb_exchange_token"
        ? await exchangeForLongLivedUserToken(deps, params.fb_exchange_token)
        : await exchangeCode(deps, params);
    return graphJson({ ...answer, token_type: "bearer" });
  } catch (error) {
    if (error instanceof GraphError) return graphErrorResponse(error);
    throw error;
  }
}

async function exchangeCode(
  deps: SandboxDeps,
  params: Record<string, string>,
): Promise<{ access_token: string; expires_in: number }> {
  if (!params.redirect_uri) throw refused(100, "Missing redirect_uri parameter.");
  if (!params.code) throw refused(100, "Missing code parameter.");
  // The code is spent by any exchange that gets this far, as Meta's are: a retry must start over.
  const redeemed = await redeemLoginCode(deps, params.code);
  if (redeemed === "used") throw refused(100, "This authorization code has been used.", 36009);
  if (redeemed === "expired") throw refused(100, "This authorization code has expired.", 36007);
  if (redeemed === "unknown" || redeemed.appId !== params.client_id)
    throw refused(100, "Invalid verification code format.");
  if (redeemed.redirectUri !== params.redirect_uri)
    throw refused(
      100,
      "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request",
      36008,
    );
  const token = await issueToken(deps, redeemed.accountId, {
    expiresAt: deps.now() + SHORT_LIVED_MS,
    kind: "short",
    login: "facebook",
    scopes: redeemed.scopes,
  });
  await grantPages(deps, token, redeemed.pageIds ?? []);
  return { access_token: token, expires_in: SHORT_LIVED_MS / 1000 };
}

async function exchangeForLongLivedUserToken(
  deps: SandboxDeps,
  userToken: string | undefined,
): Promise<{ access_token: string; expires_in: number }> {
  if (!userToken) throw refused(100, "Missing fb_exchange_token parameter.");
  const resolved = await resolveToken(deps, userToken);
  // An Instagram account's token is not a Facebook user's: Meta cannot parse it either.
  if (!resolved || resolved.accountId !== SANDBOX_FACEBOOK_USER.id) throw invalidToken();
  if (resolved.state !== "valid") throw deadTokenError(resolved.state, deps.now(), resolved.expiredAt);
  const token = await issueToken(deps, resolved.accountId, {
    expiresAt: deps.now() + LONG_LIVED_S * 1000,
    login: "facebook",
    scopes: resolved.scopes,
  });
  await grantPages(deps, token, await grantedPages(deps, userToken));
  return { access_token: token, expires_in: LONG_LIVED_S };
}

/** `me/accounts` and a Page node, once requireValidToken has resolved the caller; undefined for any other call. */
export async function answerFacebookCall(
  call: GraphCall,
  id: string,
  edge: string | undefined,
): Promise<Response | undefined> {
  if (id === "me" && edge === "accounts") return listAllowedPages(call);
  if (edge !== undefined) return undefined;
  const page = await findSandboxPage(call.deps, id);
  return page ? readPage(call, page) : undefined;
}

const PAGE_TASKS = ["ADVERTISE", "ANALYZE", "CREATE_CONTENT", "MESSAGING", "MODERATE", "MANAGE"];

async function listAllowedPages(call: GraphCall): Promise<Response> {
  if (call.method !== "GET") throw unsupportedRequest(call.method, "me");
  const token = accessTokenOf(call) ?? "";
  const resolved = await resolveToken(call.deps, token);
  if (call.caller !== SANDBOX_FACEBOOK_USER.id || !resolved)
    throw invalidParameter("Tried accessing nonexisting field (accounts) on node type (User)");
  const fields = requestedFields(call, ["id", "name", "access_token", "category", "tasks"], "Page", [
    "access_token",
    "category",
    "name",
    "id",
    "tasks",
  ]);
  const pages = await Promise.all((await grantedPages(call.deps, token)).map((id) => findSandboxPage(call.deps, id)));
  const expiresAt = resolved.kind === "short" ? call.deps.now() + SHORT_LIVED_MS : undefined;
  const data: Record<string, unknown>[] = [];
  for (const page of pages) {
    if (!page) continue;
    const accessToken = await issueToken(call.deps, page.account.accountId, {
      expiresAt,
      login: "facebook",
      scopes: resolved.scopes,
    });
    const values = {
      id: page.pageId,
      name: page.name,
      access_token: accessToken,
      category: "Creator",
      tasks: PAGE_TASKS,
    };
    data.push(pickFields(values, fields));
  }
  const cursor = (i: number) => Buffer.from(String(i)).toString("base64url");
  return graphJson({ data, paging: { cursors: { before: cursor(0), after: cursor(Math.max(0, data.length - 1)) } } });
}

/** The Page to its user (when allowed) or with its own Page token (a token of the linked account). */
async function readPage(call: GraphCall, page: SandboxPage): Promise<Response> {
  if (call.method !== "GET") throw unsupportedRequest(call.method, page.pageId);
  const allowed =
    call.caller === page.account.accountId ||
    (call.caller === SANDBOX_FACEBOOK_USER.id &&
      (await grantedPages(call.deps, accessTokenOf(call) ?? "")).includes(page.pageId));
  if (!allowed) throw unsupportedRequest(call.method, page.pageId);
  const fields = requestedFields(call, ["id", "name", "category", "instagram_business_account"], "Page");
  const values = {
    id: page.pageId,
    name: page.name,
    category: "Creator",
    instagram_business_account: linkedAccount(call.params.fields ?? "", page),
  };
  return graphJson(pickFields(values, fields));
}

/** `instagram_business_account{id,username}`: the sub-fields asked for, `id` when none are. */
function linkedAccount(fields: string, page: SandboxPage): Record<string, string> {
  const asked = /instagram_business_account\{([^}]*)\}/.exec(fields)?.[1];
  const values: Record<string, string> = { id: page.account.accountId, username: page.account.username };
  const wanted = (asked ?? "id")
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  const unknown = wanted.find((f) => !(f in values));
  if (unknown) throw invalidParameter(`Tried accessing nonexisting field (${unknown}) on node type (IGUser)`);
  return Object.fromEntries([...wanted, "id"].map((f) => [f, values[f]!]));
}
