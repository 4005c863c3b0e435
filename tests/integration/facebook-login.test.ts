import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectedAccountKeys } from "@/lib/accounts/connected-accounts";
import { finishFacebookLogin, offeredAccounts } from "@/lib/accounts/meta-login/connect-with-facebook";
import { facebookLoginDeps } from "@/lib/accounts/meta-login/meta-login-deps";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { readLoginOutcome } from "@/lib/accounts/meta-login/login-outcome-redirect";
import { callerOf, outcomePageOf, startMetaLoginStack, type MetaLoginStack } from "./meta-login-stack";
import { submitDialog } from "./sandbox-dialog";

/**
 * Facebook Login for Business end to end on the real stack: the route handlers, real Redis, and
 * the Graph sandbox over HTTP standing in for www.facebook.com and graph.facebook.com; its dialog
 * is driven as a browser would (GET the page, tick Pages, POST its form, follow the redirect),
 * and so is the picker Dispatch shows when several Instagram accounts come back. The dashboard
 * pages the routes redirect to are read through the lib functions they render.
 */

const TENANT = { id: "fblogin", key: "facebook-login-key-0123456789abcdef" };

let stack: MetaLoginStack;
let routes: {
  start: typeof import("@/app/api/accounts/connect/facebook/route");
  callback: typeof import("@/app/api/accounts/connect/facebook/callback/route");
  choose: typeof import("@/app/api/accounts/connect/facebook/choose/route");
  instagramStart: typeof import("@/app/api/accounts/connect/instagram/route");
  instagramCallback: typeof import("@/app/api/accounts/connect/instagram/callback/route");
};

beforeAll(async () => {
  stack = await startMetaLoginStack(TENANT);
  routes = {
    start: await import("@/app/api/accounts/connect/facebook/route"),
    callback: await import("@/app/api/accounts/connect/facebook/callback/route"),
    choose: await import("@/app/api/accounts/connect/facebook/choose/route"),
    instagramStart: await import("@/app/api/accounts/connect/instagram/route"),
    instagramCallback: await import("@/app/api/accounts/connect/instagram/callback/route"),
  };
});

afterAll(async () => {
  await stack?.close();
});

const graph = () => `${stack.origin}/graph`;

/** GET /api/accounts/connect/facebook as the signed-in browser: the dialog's address. */
async function startLogin(cookie: string): Promise<URL> {
  const response = await routes.start.GET(
    new Request(`${stack.publicUrl}/api/accounts/connect/facebook`, { headers: { cookie } }),
    undefined,
  );
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

/** Sandbox accounts, each with its Page: their ids and usernames. */
async function newAccounts(prefix: string, count: number): Promise<{ accountId: string; username: string }[]> {
  const accounts = [];
  for (let i = 0; i < count; i++) {
    const username = `${prefix}_${i}_${Date.now()}`;
    accounts.push({ accountId: await stack.newSandboxAccount(username), username });
  }
  return accounts;
}

/** The dialog's form, with the Pages of these accounts ticked, sent by the signed-in browser: where Facebook sends it back. */
async function decide(
  dialog: URL,
  cookie: string,
  decision: "allow" | "cancel",
  usernames: string[] = [],
  untick: string[] = [],
): Promise<URL> {
  const response = await submitDialog(dialog, cookie, (form, html) => {
    form.set("decision", decision);
    for (const username of usernames) {
      const pageId = new RegExp(`value="(\\d+)"> [^<]* · Instagram @${username}<`).exec(html)?.[1];
      expect(pageId, `the dialog lists the Page of @${username}`).toBeTruthy();
      form.append("page_id", pageId!);
    }
    for (const scope of untick) form.delete("permission", scope);
  });
  expect(response.status).toBe(302);
  const location = response.headers.get("location")!;
  expect(location.endsWith("#_=_")).toBe(true);
  return new URL(location);
}

async function callback(back: URL, cookie: string): Promise<Response> {
  return routes.callback.GET(
    new Request(`${stack.publicUrl}${back.pathname}${back.search}`, { headers: { cookie } }),
    undefined,
  );
}

/** The picker's form, posted from its own page. */
async function choose(cookie: string, choiceId: string, accountIds: string[]): Promise<Response> {
  const body = new URLSearchParams({ choice: choiceId });
  for (const id of accountIds) body.append("account_id", id);
  return routes.choose.POST(
    new Request(`${stack.publicUrl}/api/accounts/connect/facebook/choose`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body,
    }),
    undefined,
  );
}

/** The picker page a callback sent the browser to: its choice's id, the only thing its address carries. */
function choiceIdOf(response: Response): string {
  expect(response.status).toBe(303);
  const location = new URL(response.headers.get("location")!, stack.publicUrl);
  expect(location.pathname).toBe("/dashboard/accounts/connect/choose");
  expect([...location.searchParams.keys()]).toEqual(["choice"]);
  return location.searchParams.get("choice")!;
}

const outcomeOf = (response: Response, cookie: string) => outcomePageOf(stack.redis, response, cookie, TENANT.id);
const listed = async (accountId: string) => (await stack.listAccounts()).find((a) => a.account_id === accountId);

describe("Facebook Login for Business", () => {
  it("sends the browser to Facebook's dialog with the app, the exact redirect_uri, the scopes and a state", async () => {
    const dialog = await startLogin(await stack.signedInCookie());
    expect(`${dialog.origin}${dialog.pathname}`).toBe(`${graph()}/v21.0/dialog/oauth`);
    expect(Object.fromEntries(dialog.searchParams)).toEqual({
      client_id: stack.apps.facebook.id,
      redirect_uri: `${stack.publicUrl}/api/accounts/connect/facebook/callback`,
      scope:
        "instagram_basic,instagram_content_publish,instagram_manage_insights,pages_show_list,pages_read_engagement,business_management",
      state: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
  });

  it("one Page allowed: connects its Instagram account with the Page token sealed, no expiry, the Facebook Graph host", async () => {
    const [account] = await newAccounts("fb_one", 1);
    const cookie = await stack.signedInCookie();
    const response = await callback(
      await decide(await startLogin(cookie), cookie, "allow", [account!.username]),
      cookie,
    );
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(
      `/dashboard/accounts?connected=${account!.accountId}#account-${account!.accountId}`,
    );
    const view = await listed(account!.accountId);
    expect(view).toMatchObject({
      status: "connected",
      login: "facebook",
      username: account!.username,
      token_expires_at: null,
    });
    // The Page token works at the account's Graph host: the quota was read with it.
    expect(view!.quota.quota_total).toEqual(expect.any(Number));
    const record = await stack.redis.hgetall(connectedAccountKeys.record(account!.accountId));
    expect(record.token).toMatch(/^v1\./);
    expect(record.graph_url).toBe(stack.config.FACEBOOK_LOGIN.graphUrl);
  });

  it("two Pages allowed: a picker lists both accounts (no token on the page); the one ticked is connected, once", async () => {
    const [first, second] = await newAccounts("fb_pick", 2);
    const cookie = await stack.signedInCookie();
    const picker = await callback(
      await decide(await startLogin(cookie), cookie, "allow", [first!.username, second!.username]),
      cookie,
    );
    const choiceId = choiceIdOf(picker);
    expect(choiceId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // The page lists exactly the accounts and their Pages: no token reaches it.
    const offer = await offeredAccounts(stack.redis, choiceId, callerOf(cookie, TENANT.id));
    expect(offer).toEqual({
      kind: "choose",
      choiceId,
      options: expect.arrayContaining(
        [first!, second!].map(({ accountId, username }) => ({ accountId, username, pageName: `${username} Page` })),
      ),
    });
    expect(offer.kind === "choose" && offer.options).toHaveLength(2);
    expect(await listed(first!.accountId)).toBeUndefined();

    // Another session's browser can neither see it nor use it, and its attempt leaves it to its owner.
    const strangerCookie = await stack.signedInCookie();
    expect(await offeredAccounts(stack.redis, choiceId, callerOf(strangerCookie, TENANT.id))).toMatchObject({
      kind: "refused",
      detail: expect.stringContaining("another session"),
    });
    const stranger = await choose(strangerCookie, choiceId, [second!.accountId]);
    expect((await outcomeOf(stranger, strangerCookie)).detail).toContain("another session");
    const nothingTicked = await choose(cookie, choiceId, []);
    expect((await outcomeOf(nothingTicked, cookie)).detail).toContain("No account was ticked");

    const chosen = await choose(cookie, choiceId, [second!.accountId]);
    expect(chosen.status).toBe(303);
    expect(chosen.headers.get("location")).toBe(
      `/dashboard/accounts?connected=${second!.accountId}#account-${second!.accountId}`,
    );
    expect(await listed(second!.accountId)).toMatchObject({ login: "facebook", token_expires_at: null });
    expect(await listed(first!.accountId)).toBeUndefined();

    const again = await choose(cookie, choiceId, [first!.accountId]);
    expect((await outcomeOf(again, cookie)).detail).toContain("already made");
    expect(await listed(first!.accountId)).toBeUndefined();
    expect(await offeredAccounts(stack.redis, choiceId, callerOf(cookie, TENANT.id))).toMatchObject({
      kind: "refused",
      detail: expect.stringContaining("already made"),
    });
  });

  it("a picker's form naming an account it did not offer connects nothing", async () => {
    const [first, second] = await newAccounts("fb_forged", 2);
    const cookie = await stack.signedInCookie();
    const picker = await callback(
      await decide(await startLogin(cookie), cookie, "allow", [first!.username, second!.username]),
      cookie,
    );
    const forged = await choose(cookie, choiceIdOf(picker), [first!.accountId, "17841400000000000"]);
    expect((await outcomeOf(forged, cookie)).detail).toContain("not offered");
    expect(await listed(first!.accountId)).toBeUndefined();
  });

  it("the same callback twice, a state from another session or the Instagram login, and a late one: refused, nothing stored", async () => {
    const [account] = await newAccounts("fb_state", 1);
    const cookie = await stack.signedInCookie();
    const back = await decide(await startLogin(cookie), cookie, "allow", [account!.username]);
    expect((await callback(back, cookie)).status).toBe(303);
    await stack.redis.del(connectedAccountKeys.record(account!.accountId));
    const replay = await callback(back, cookie);
    expect((await outcomeOf(replay, cookie)).detail).toContain("already used");

    const strangerCookie = await stack.signedInCookie();
    const stranger = await callback(
      await decide(await startLogin(cookie), cookie, "allow", [account!.username]),
      strangerCookie,
    );
    expect((await outcomeOf(stranger, strangerCookie)).detail).toContain("started in another session");

    const instagramDialog = new URL(
      (
        await routes.instagramStart.GET(
          new Request(`${stack.publicUrl}/api/accounts/connect/instagram`, { headers: { cookie } }),
          undefined,
        )
      ).headers.get("location")!,
    );
    const crossed = new URL(back);
    crossed.searchParams.set("state", instagramDialog.searchParams.get("state")!);
    expect((await outcomeOf(await callback(crossed, cookie), cookie)).detail).toContain("not started here");

    const late = await decide(await startLogin(cookie), cookie, "allow", [account!.username]);
    const { getServices } = await import("@/lib/web/services");
    const lateDeps = {
      ...facebookLoginDeps(getServices()),
      now: () => Date.now() + (stack.config.META_LOGIN_STATE_TTL_S + 1) * 1000,
    };
    const request = new Request(`${stack.publicUrl}${late.pathname}`, { headers: { cookie } });
    const outcome = await finishFacebookLogin(
      lateDeps,
      loginCallerOf(request, TENANT.id),
      Object.fromEntries(late.searchParams),
    );
    expect(outcome).toMatchObject({ kind: "refused", detail: expect.stringContaining("took too long") });
    expect(await listed(account!.accountId)).toBeUndefined();
  });

  it("Cancel at the dialog: 'You cancelled at Facebook'; no Page allowed: says so; nothing stored either way", async () => {
    const cookie = await stack.signedInCookie();
    const cancelled = await decide(await startLogin(cookie), cookie, "cancel");
    expect(Object.fromEntries(cancelled.searchParams)).toMatchObject({
      error: "access_denied",
      error_reason: "user_denied",
    });
    const count = (await stack.listAccounts()).length;
    const response = await callback(cancelled, cookie);
    expect(await outcomeOf(response, cookie)).toEqual({
      kind: "refused",
      title: "You cancelled at Facebook",
      detail: "Nothing was connected.",
    });
    // The page's message is this session's: another one's browser, given the address, is shown nothing of it.
    expect(await outcomeOf(response, await stack.signedInCookie())).toMatchObject({ title: "Nothing to show" });

    const none = await callback(await decide(await startLogin(cookie), cookie, "allow", []), cookie);
    expect((await outcomeOf(none, cookie)).detail).toContain("None of the Pages you allowed");
    expect(await stack.listAccounts()).toHaveLength(count);
  });

  it("back from Meta after the session ended: to sign in, then a page saying nothing was connected, for both logins; nothing stored and the state left", async () => {
    const [account] = await newAccounts("fb_signed_out", 1);
    const { getServices } = await import("@/lib/web/services");
    for (const login of ["facebook", "instagram"] as const) {
      const cookie = await stack.signedInCookie();
      const back =
        login === "facebook"
          ? await decide(await startLogin(cookie), cookie, "allow", [account!.username])
          : new URL(`${stack.publicUrl}/api/accounts/connect/instagram/callback?code=x&state=${"A".repeat(32)}`);
      await getServices().sessions.revoke(cookie.slice(cookie.indexOf("=") + 1));
      const route = login === "facebook" ? routes.callback : routes.instagramCallback;
      const response = await route.GET(
        new Request(`${stack.publicUrl}${back.pathname}${back.search}`, { headers: { cookie } }),
        undefined,
      );
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(
        "/sign-in?next=%2Fdashboard%2Faccounts%2Fconnect%3Foutcome%3Dsigned-out",
      );
      // Signed in again, the browser lands on the page that says nothing was connected.
      const next = new URL(
        new URL(response.headers.get("location")!, stack.publicUrl).searchParams.get("next")!,
        stack.publicUrl,
      );
      const page = await readLoginOutcome(
        stack.redis,
        next.searchParams.get("outcome"),
        callerOf(await stack.signedInCookie(), TENANT.id),
      );
      expect(page).toMatchObject({ title: "Nothing was connected", detail: expect.stringContaining("not signed in") });
      const state = back.searchParams.get("state")!;
      expect(await stack.redis.exists(`meta-login:state:${state}:used`)).toBe(0);
    }
    expect(await listed(account!.accountId)).toBeUndefined();
  });
});

describe("the sandbox's Facebook endpoints answer as Meta's", () => {
  const tokenUrl = (params: Record<string, string>) =>
    `${graph()}/v21.0/oauth/access_token?${new URLSearchParams({
      client_id: stack.apps.facebook.id,
      client_secret: stack.apps.facebook.secret,
      ...params,
    })}`;
  const exchange = (fields: Record<string, string>) =>
    fetch(tokenUrl({ redirect_uri: stack.config.FACEBOOK_LOGIN.redirectUri, ...fields }));
  type GraphErrorBody = { error: { message: string; type: string; code: number; error_subcode?: number } };
  const errorOf = async (response: Response) => {
    expect(response.status).toBe(400);
    return ((await response.json()) as GraphErrorBody).error;
  };

  async function freshCode(usernames: string[] = []): Promise<string> {
    const cookie = await stack.signedInCookie();
    const back = await decide(await startLogin(cookie), cookie, "allow", usernames);
    return back.searchParams.get("code")!;
  }

  it("a code works once: the second exchange is Graph's 100/36009", async () => {
    const code = await freshCode();
    const first = await exchange({ code });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 3600 });
    expect(await errorOf(await exchange({ code }))).toMatchObject({
      type: "OAuthException",
      code: 100,
      error_subcode: 36009,
      message: "This authorization code has been used.",
    });
  });

  it("a wrong secret, a wrong redirect_uri and an expired code are refused with Graph error objects", async () => {
    expect(await errorOf(await exchange({ code: await freshCode(), client_secret: "not-the-secret" }))).toMatchObject({
      type: "OAuthException",
      code: 1,
      message: "Error validating client secret.",
    });
    expect(
      await errorOf(await exchange({ code: await freshCode(), redirect_uri: `${stack.publicUrl}/elsewhere` })),
    ).toMatchObject({ code: 100, error_subcode: 36008, message: expect.stringMatching(/redirect_uri is identical/) });
    const code = await freshCode();
    stack.skew.ms = 61 * 60 * 1000;
    try {
      expect(await errorOf(await exchange({ code }))).toMatchObject({
        code: 100,
        error_subcode: 36007,
        message: "This authorization code has expired.",
      });
    } finally {
      stack.skew.ms = 0;
    }
  });

  it("fb_exchange_token: a wrong secret refused; then a 60-day token whose me/accounts and Page read answer in Meta's shapes", async () => {
    const [account] = await newAccounts("fb_shapes", 1);
    const { access_token: userToken } = (await (
      await exchange({ code: await freshCode([account!.username]) })
    ).json()) as {
      access_token: string;
    };
    const longLived = (secret: string) =>
      fetch(tokenUrl({ grant_type: "fb_exchange_token", client_secret: secret, fb_exchange_token: userToken }));
    expect(await errorOf(await longLived("not-the-secret"))).toMatchObject({ code: 1 });
    const answer = (await (await longLived(stack.apps.facebook.secret)).json()) as Record<string, unknown>;
    expect(answer).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 5_183_944 });

    const pages = await fetch(`${graph()}/v21.0/me/accounts`, {
      headers: { authorization: `OAuth ${answer.access_token as string}` },
    });
    expect(pages.status).toBe(200);
    const body = (await pages.json()) as { data: Record<string, unknown>[]; paging: unknown };
    expect(body.data).toEqual([
      {
        access_token: expect.any(String),
        category: "Creator",
        name: `${account!.username} Page`,
        id: expect.stringMatching(/^\d{15}$/),
        tasks: expect.arrayContaining(["CREATE_CONTENT"]),
      },
    ]);
    expect(body.paging).toMatchObject({ cursors: { before: expect.any(String), after: expect.any(String) } });

    const page = body.data[0]!;
    const read = await fetch(
      `${graph()}/v21.0/${page.id as string}?${new URLSearchParams({ fields: "instagram_business_account{id,username}" })}`,
      { headers: { authorization: `OAuth ${page.access_token as string}` } },
    );
    expect(await read.json()).toEqual({
      instagram_business_account: { id: account!.accountId, username: account!.username },
      id: page.id,
    });
    // The Page token is the account's to publish with: it reads the account's own node.
    const node = await fetch(`${graph()}/v21.0/${account!.accountId}?fields=id,username`, {
      headers: { authorization: `OAuth ${page.access_token as string}` },
    });
    expect(await node.json()).toMatchObject({ id: account!.accountId, username: account!.username });
  });

  it("the dialog refuses a redirect_uri the app did not register, and an unknown app", async () => {
    const dialog = await startLogin(await stack.signedInCookie());
    const elsewhere = new URL(dialog);
    elsewhere.searchParams.set("redirect_uri", "https://elsewhere.example/callback");
    const blocked = await fetch(elsewhere);
    expect(blocked.status).toBe(400);
    expect(await blocked.text()).toContain("URL Blocked");
    dialog.searchParams.set("client_id", "999");
    expect(await (await fetch(dialog)).text()).toContain("Invalid App ID");
  });
});
