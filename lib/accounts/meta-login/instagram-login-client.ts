import type { InstagramLoginConfig } from "../../config";
import { waitForPace } from "../../graph/pacing";
import { callMeta, isRecord, MetaLoginError, type LoginClientDeps } from "./meta-call";

export { MetaLoginError, type LoginClientDeps };

/**
 * Instagram Login's three calls after the dialog, as Meta documents them: the code for a
 * short-lived token (api.instagram.com, a form POST), that for a long-lived one
 * (graph.instagram.com/access_token, ig_exchange_token), and the professional account it
 * belongs to (`me?fields=user_id,username`); and later the long-lived token's refresh
 * (refresh_access_token, ig_refresh_token). Secrets and tokens never appear in an error.
 */

export interface LongLivedToken {
  accessToken: string;
  /** Seconds from now; Meta says about 60 days. */
  expiresIn: number;
}

export interface InstagramProfile {
  userId: string;
  username: string | null;
}

type Endpoints = Pick<InstagramLoginConfig, "tokenUrl" | "graphUrl" | "redirectUri"> & {
  app: { id: string; secret: string };
};

export async function exchangeCode(deps: LoginClientDeps, login: Endpoints, code: string): Promise<string> {
  const form = new URLSearchParams({
    client_id: login.app.id,
    client_secret: login.app.secret,
    grant_type: "authorization_code",
    redirect_uri: login.redirectUri,
    code,
  });
  const body = await callMeta(deps, "exchange the code", `${login.tokenUrl}/oauth/access_token`, {
    method: "POST",
    body: form,
  });
  // Meta's newer pages show {data: [{access_token, user_id, permissions}]}; Instagram answers it flat.
  const entry = Array.isArray(body.data) && isRecord(body.data[0]) ? body.data[0] : body;
  if (typeof entry.access_token !== "string" || !entry.access_token)
    throw new MetaLoginError("Instagram answered the code exchange without an access token.", null);
  return entry.access_token;
}

export async function exchangeForLongLivedToken(
  deps: LoginClientDeps,
  login: Endpoints,
  shortLived: string,
): Promise<LongLivedToken> {
  const query = new URLSearchParams({
    grant_type: "ig_exchange_token",
    client_secret: login.app.secret,
    access_token: shortLived,
  });
  const body = await callMeta(deps, "get a long-lived token", `${login.graphUrl}/access_token?${query}`, {
    method: "GET",
  });
  if (typeof body.access_token !== "string" || typeof body.expires_in !== "number")
    throw new MetaLoginError("Instagram answered the long-lived token exchange without a token or its expiry.", null);
  return { accessToken: body.access_token, expiresIn: body.expires_in };
}

/**
 * A long-lived token (at least 24 h old, not expired) for a new one, at the account's Instagram
 * Graph host. Paced as the account's publishing calls are: while Graph's usage holds the app or
 * the account back, it is not sent (GraphPaused), since a refresh can wait and a refused one costs
 * a try.
 */
export async function refreshLongLivedToken(
  deps: LoginClientDeps,
  graphUrl: string,
  account: { accountId: string; accessToken: string },
): Promise<LongLivedToken> {
  await waitForPace(deps.pacer, account.accountId);
  const query = new URLSearchParams({ grant_type: "ig_refresh_token", access_token: account.accessToken });
  const body = await callMeta(
    deps,
    "refresh the token",
    `${graphUrl}/refresh_access_token?${query}`,
    { method: "GET" },
    { accountId: account.accountId },
  );
  if (typeof body.access_token !== "string" || !body.access_token || typeof body.expires_in !== "number")
    throw new MetaLoginError("Instagram answered the token refresh without a token or its expiry.", null);
  return { accessToken: body.access_token, expiresIn: body.expires_in };
}

export async function readInstagramProfile(
  deps: LoginClientDeps,
  login: Endpoints,
  accessToken: string,
): Promise<InstagramProfile> {
  const query = new URLSearchParams({ fields: "user_id,username", access_token: accessToken });
  const body = await callMeta(deps, "read the account", `${login.graphUrl}/${deps.version}/me?${query}`, {
    method: "GET",
  });
  // user_id, not id: id is the app-scoped user, user_id the professional account that publishes.
  const userId =
    typeof body.user_id === "string"
      ? body.user_id
      : typeof body.user_id === "number" && Number.isSafeInteger(body.user_id)
        ? String(body.user_id)
        : null;
  if (!userId || !/^[0-9A-Za-z_-]{1,64}$/.test(userId))
    throw new MetaLoginError("Instagram did not say which account the token belongs to.", null);
  return { userId, username: typeof body.username === "string" ? body.username : null };
}
