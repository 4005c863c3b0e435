import type { FacebookLoginConfig } from "../../config";
import { callMeta, isRecord, MetaLoginError, type LoginClientDeps } from "./meta-call";

/**
 * Facebook Login for Business's calls after the dialog, as Meta documents them, all on the
 * Facebook Graph host: the code for a user token (`oauth/access_token`), that for a long-lived
 * one (`fb_exchange_token`), the person's Pages with their Page tokens (`me/accounts`), and the
 * Instagram account linked to each Page. Secrets and tokens never appear in an error.
 */

type Endpoints = Pick<FacebookLoginConfig, "graphUrl" | "redirectUri"> & { app: { id: string; secret: string } };

export interface FacebookPage {
  id: string;
  name: string;
  /** The Page token: from a long-lived user token, it does not expire. */
  accessToken: string;
}

export interface LinkedInstagramAccount {
  accountId: string;
  username: string | null;
}

/** Pages read per call; a person with more than this many is asked page by page (`paging.next`). */
const PAGES_PER_CALL = 100;
/** `me/accounts` pages followed at most, so a looping `next` cannot keep a callback waiting. */
const MAX_PAGE_LISTS = 10;

const graphCall = (deps: LoginClientDeps, what: string, url: string) =>
  callMeta(deps, what, url, { method: "GET" }, { who: "Facebook" });

function tokenOf(body: Record<string, unknown>, what: string): string {
  if (typeof body.access_token !== "string" || !body.access_token)
    throw new MetaLoginError(`Facebook answered the ${what} without an access token.`, null);
  return body.access_token;
}

export async function exchangeFacebookCode(deps: LoginClientDeps, login: Endpoints, code: string): Promise<string> {
  const query = new URLSearchParams({
    client_id: login.app.id,
    redirect_uri: login.redirectUri,
    client_secret: login.app.secret,
    code,
  });
  const url = `${login.graphUrl}/${deps.version}/oauth/access_token?${query}`;
  return tokenOf(await graphCall(deps, "exchange the code", url), "code exchange");
}

export async function exchangeForLongLivedUserToken(
  deps: LoginClientDeps,
  login: Endpoints,
  userToken: string,
): Promise<string> {
  const query = new URLSearchParams({
    grant_type: "fb_exchange_token",
    client_id: login.app.id,
    client_secret: login.app.secret,
    fb_exchange_token: userToken,
  });
  const url = `${login.graphUrl}/${deps.version}/oauth/access_token?${query}`;
  return tokenOf(await graphCall(deps, "get a long-lived token", url), "long-lived token exchange");
}

/** The Pages the person let the app see, each with its Page token. */
export async function listFacebookPages(
  deps: LoginClientDeps,
  login: Endpoints,
  userToken: string,
): Promise<FacebookPage[]> {
  const query = new URLSearchParams({ fields: "id,name,access_token", limit: String(PAGES_PER_CALL) });
  let url: string | undefined = `${login.graphUrl}/${deps.version}/me/accounts?${query}`;
  const pages: FacebookPage[] = [];
  for (let list = 0; url && list < MAX_PAGE_LISTS; list++) {
    // The token goes in a header, not in `url`: `paging.next` carries one of its own otherwise.
    const body = await callMeta(
      deps,
      "list your Pages",
      url,
      { method: "GET", headers: { authorization: `OAuth ${userToken}` } },
      { who: "Facebook" },
    );
    for (const entry of Array.isArray(body.data) ? body.data : []) {
      if (!isRecord(entry) || typeof entry.id !== "string" || typeof entry.access_token !== "string") continue;
      pages.push({
        id: entry.id,
        name: typeof entry.name === "string" ? entry.name : entry.id,
        accessToken: entry.access_token,
      });
    }
    url = nextPageUrl(body, login.graphUrl);
  }
  return pages;
}

/** `paging.next`, followed only on the configured Graph host: the answer never chooses where a token goes. */
function nextPageUrl(body: Record<string, unknown>, graphUrl: string): string | undefined {
  const next = isRecord(body.paging) ? body.paging.next : undefined;
  if (typeof next !== "string" || !next.startsWith(`${graphUrl}/`)) return undefined;
  const url = new URL(next);
  url.searchParams.delete("access_token");
  return url.toString();
}

/** The Instagram professional account linked to the Page; null when it has none. */
export async function readLinkedInstagramAccount(
  deps: LoginClientDeps,
  login: Endpoints,
  page: FacebookPage,
): Promise<LinkedInstagramAccount | null> {
  const query = new URLSearchParams({ fields: "instagram_business_account{id,username}" });
  const body = await callMeta(
    deps,
    `read the Instagram account of the Page ${page.name}`,
    `${login.graphUrl}/${deps.version}/${encodeURIComponent(page.id)}?${query}`,
    { method: "GET", headers: { authorization: `OAuth ${page.accessToken}` } },
    { who: "Facebook" },
  );
  const linked = body.instagram_business_account;
  if (!isRecord(linked)) return null;
  if (typeof linked.id !== "string" || !/^[0-9A-Za-z_-]{1,64}$/.test(linked.id))
    throw new MetaLoginError(`Facebook did not say which Instagram account the Page ${page.name} is linked to.`, null);
  return { accountId: linked.id, username: typeof linked.username === "string" ? linked.username : null };
}
