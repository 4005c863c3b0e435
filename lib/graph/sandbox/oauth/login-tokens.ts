import { createHash } from "node:crypto";
import { GraphError } from "../../error";
import type { SandboxDeps } from "../deps";
import {
  graphErrorResponse,
  graphJson,
  invalidParameter,
  invalidToken,
  missingToken,
  type GraphCall,
} from "../graph-request";
import { findSandboxAccount, longLivedLifetimeOf, takeFault } from "../sandbox-accounts";
import { deadTokenError, issueLongLivedToken, issueToken, LONG_LIVED_S, resolveToken } from "../sandbox-tokens";
import { redeemLoginCode } from "./login-codes";

/**
 * Instagram Login's token endpoints, in Meta's shapes:
 *   POST /oauth/access_token   (api.instagram.com) code → short-lived token; errors {error_type, code, error_message}
 *   GET  /access_token         (graph.instagram.com) ig_exchange_token → long-lived token; errors are Graph error objects
 *   GET  /refresh_access_token (graph.instagram.com) ig_refresh_token → a long-lived token again, 60 days
 *   GET  /{version}/me         the token's account: user_id (the professional account's id), username, id (app-scoped)
 */

export const SHORT_LIVED_MS = 60 * 60 * 1000;
/** Meta refreshes a long-lived token only once it is this old. */
export const REFRESHABLE_AFTER_MS = 24 * 60 * 60 * 1000;

/** Instagram's OAuth errors (api.instagram.com) are not Graph error objects. */
function oauthError(message: string): Response {
  return graphJson({ error_type: "OAuthException", code: 400, error_message: message }, 400);
}

export async function exchangeLoginCode(deps: SandboxDeps, params: Record<string, string>): Promise<Response> {
  const app = deps.config.INSTAGRAM_LOGIN.app;
  if (
    !params.client_id ||
    !params.client_secret ||
    !params.code ||
    !params.redirect_uri ||
    params.grant_type !== "authorization_code"
  ) {
    return oauthError(
      "You must provide a client_id, client_secret, grant_type=authorization_code, redirect_uri and code",
    );
  }
  if (!app || params.client_id !== app.id) return oauthError("Invalid platform app");
  if (params.client_secret !== app.secret) return oauthError("Error validating client secret.");
  // The code is spent by any exchange that gets this far, as Meta's are: a retry must start over.
  const redeemed = await redeemLoginCode(deps, params.code);
  if (redeemed === "unknown") return oauthError("Matching code was not found or was already used.");
  if (redeemed === "used") return oauthError("This authorization code has been used");
  if (redeemed === "expired") return oauthError("This authorization code has expired");
  if (redeemed.appId !== params.client_id) return oauthError("Matching code was not found or was already used.");
  if (redeemed.redirectUri !== params.redirect_uri)
    return oauthError(
      "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request",
    );
  const accessToken = await issueToken(deps, redeemed.accountId, {
    expiresAt: deps.now() + SHORT_LIVED_MS,
    kind: "short",
    login: "instagram",
    scopes: redeemed.scopes,
  });
  // Meta's Business Login page: wrapped in `data`, user_id the app-scoped id as a string, and
  // `permissions` the scopes the person allowed, comma-separated. (The older flat answer with a
  // numeric user_id is Basic Display's; Dispatch's client reads both.)
  return new Response(
    JSON.stringify({
      data: [
        {
          access_token: accessToken,
          user_id: appScopedIdOf(redeemed.accountId),
          permissions: redeemed.scopes.join(","),
        },
      ],
    }),
    { status: 200, headers: { "content-type": "application/json; charset=UTF-8", "cache-control": "no-store" } },
  );
}

export async function exchangeForLongLived(deps: SandboxDeps, params: Record<string, string>): Promise<Response> {
  const app = deps.config.INSTAGRAM_LOGIN.app;
  try {
    if (params.grant_type !== "ig_exchange_token")
      throw invalidParameter("Invalid grant_type: expected ig_exchange_token");
    if (!app || params.client_secret !== app.secret)
      throw new GraphError({ code: 101, message: "Error validating client secret.", isTransient: false });
    if (!params.access_token) throw missingToken();
    const resolved = await resolveToken(deps, params.access_token);
    if (!resolved) throw invalidToken();
    if (resolved.state !== "valid") throw deadTokenError(resolved.state, deps.now());
    if (resolved.kind !== "short")
      throw invalidParameter("Only a short-lived token can be exchanged for a long-lived one");
    const expiresIn = (await longLivedLifetimeOf(deps, resolved.accountId)) ?? LONG_LIVED_S;
    const accessToken = await issueLongLivedToken(deps, resolved.accountId, expiresIn, {
      login: "instagram",
      scopes: resolved.scopes,
    });
    return graphJson({ access_token: accessToken, token_type: "bearer", expires_in: expiresIn });
  } catch (error) {
    if (error instanceof GraphError) return graphErrorResponse(error);
    throw error;
  }
}

/**
 * `GET /refresh_access_token?grant_type=ig_refresh_token&access_token`: as Meta, only a long-lived
 * token at least 24 h old and not expired; an expired one answers 190, as every call with it does.
 * The old token keeps working until its own expiry. A fault queued `on: "refresh"` answers first.
 */
export async function refreshLongLived(deps: SandboxDeps, params: Record<string, string>): Promise<Response> {
  try {
    if (params.grant_type !== "ig_refresh_token")
      throw invalidParameter("Invalid grant_type: expected ig_refresh_token");
    if (!params.access_token) throw missingToken();
    const resolved = await resolveToken(deps, params.access_token);
    if (!resolved) throw invalidToken();
    const fault = await takeFault(deps, resolved.accountId, "refresh");
    if (fault) throw fault;
    if (resolved.state !== "valid") throw deadTokenError(resolved.state, deps.now(), resolved.expiredAt);
    if (resolved.kind !== "long") throw invalidParameter("Only a long-lived token can be refreshed");
    if (resolved.issuedAt !== undefined && deps.now() - resolved.issuedAt < REFRESHABLE_AFTER_MS)
      throw invalidParameter("The access token is less than 24 hours old and cannot be refreshed yet");
    const accessToken = await issueToken(deps, resolved.accountId, {
      expiresAt: deps.now() + LONG_LIVED_S * 1000,
      login: "instagram",
      scopes: resolved.scopes,
    });
    return graphJson({ access_token: accessToken, token_type: "bearer", expires_in: LONG_LIVED_S });
  } catch (error) {
    if (error instanceof GraphError) return graphErrorResponse(error);
    throw error;
  }
}

/** `GET /me`: the caller's own account; requireValidToken has resolved it. */
export async function readMe(call: GraphCall): Promise<Response> {
  const account = call.caller ? await findSandboxAccount(call.deps, call.caller) : undefined;
  if (!account) throw invalidToken();
  const values: Record<string, string> = {
    user_id: account.accountId,
    username: account.username,
    name: account.name,
    account_type: "BUSINESS",
    id: appScopedIdOf(account.accountId),
  };
  const fields = (call.params.fields || "id")
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  const unknown = fields.find((f) => !(f in values));
  if (unknown)
    throw new GraphError({
      code: 100,
      message: `(#100) Tried accessing nonexisting field (${unknown}) on node type (User)`,
    });
  return graphJson(Object.fromEntries([...fields, "id"].map((f) => [f, values[f]])));
}

/** Instagram Login's app-scoped user id: another number than the account's, so a client that mixes them up fails here too. */
function appScopedIdOf(accountId: string): string {
  return `2${BigInt(`0x${createHash("sha256").update(`app-scoped:${accountId}`).digest("hex").slice(0, 13)}`)
    .toString()
    .padStart(16, "0")}`;
}
