import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, readSecretFile, type Config } from "@/lib/config";
import { createRedis, type Redis } from "@/lib/redis";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { SESSION_COOKIE, SessionStore } from "@/lib/web/sessions";
import { waitFor } from "../helpers";
import { serveSandbox, type SandboxServer } from "../sandbox-server";
import { openDialog, sessionReader, submitDialog } from "./sandbox-dialog";

/**
 * Who may use the sandbox's login dialogs and what their tokens may do, on the sandbox as
 * `npm start` configures it (its own apps, their secrets under DATA_DIR, one REEL_ACCOUNTS account
 * per tenant) over real HTTP and real Redis: no code without a Dispatch session, no tenant's code
 * for another tenant's account, the scopes a person allowed carried to every token made from the
 * code, and Meta's code 10 for a call the token was not allowed.
 */

const SAMPLE = path.resolve(__dirname, "../../public/samples/reel-valid.mp4");
const INSTAGRAM_SCOPES =
  "instagram_business_basic,instagram_business_content_publish,instagram_business_manage_insights";
const FACEBOOK_SCOPES =
  "instagram_basic,instagram_content_publish,instagram_manage_insights,pages_show_list,pages_read_engagement,business_management";

let redis: Redis;
let server: SandboxServer;
let config: Config;
let deps: SandboxDeps;
let sessions: SessionStore;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "sandbox-access-"));
  redis = createRedis(inject("redisUrl"));
  deps = {} as SandboxDeps;
  server = await serveSandbox(deps);
  // GRAPH_URL unset: the sandbox of this server's PORT, with its own apps, as `npm start` has it.
  config = parseConfig(
    {
      REDIS_URL: inject("redisUrl"),
      KAFKA_BROKERS: inject("kafkaBrokers"),
      API_KEYS: "alpha:alpha-key-0123456789abcdef,beta:beta-key-0123456789abcdef",
      PORT: "3987",
      DATA_DIR: dataDir,
      SANDBOX_PROCESSING_MS: "50",
    },
    readSecretFile,
  );
  expect(config.GRAPH_SANDBOX).toBe(true);
  sessions = new SessionStore(redis, randomBytes(32));
  Object.assign(deps, {
    redis,
    config,
    log: () => {},
    now: () => Date.now(),
    limits: { insightsLagMs: 0 },
    ...sessionReader(sessions),
  });
});

afterAll(async () => {
  if (deps?.redis) await settleSandboxProcessing(deps);
  await server?.close();
  redis?.disconnect();
  await rm(dataDir, { recursive: true, force: true });
});

/** A URL of the configuration's, on this test's server: the hosts' paths as the configuration has them. */
const here = (url: string, query: Record<string, string> = {}) => {
  const at = new URL(new URL(url).pathname, server.url);
  for (const [name, value] of Object.entries(query)) at.searchParams.set(name, value);
  return at;
};
const instagramGraph = () => here(config.INSTAGRAM_LOGIN.graphUrl).toString();
const facebookGraph = () => here(config.FACEBOOK_LOGIN.graphUrl).toString();

const cookieOf = async (tenantId: string) => `${SESSION_COOKIE}=${(await sessions.create(tenantId)).value}`;

const instagramDialog = (scope = INSTAGRAM_SCOPES) =>
  here(config.INSTAGRAM_LOGIN.dialogUrl, {
    client_id: config.INSTAGRAM_LOGIN.app!.id,
    redirect_uri: config.INSTAGRAM_LOGIN.redirectUri,
    response_type: "code",
    scope,
    state: "s".repeat(32),
  });

const facebookDialog = (scope = FACEBOOK_SCOPES) =>
  here(config.FACEBOOK_LOGIN.dialogUrl, {
    client_id: config.FACEBOOK_LOGIN.app!.id,
    redirect_uri: config.FACEBOOK_LOGIN.redirectUri,
    scope,
    state: "s".repeat(32),
  });

async function control(body: Record<string, unknown>): Promise<{ account_id: string; access_token: string }> {
  const response = await fetch(`${server.url}/graph/_sandbox/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { account_id: string; access_token: string };
}

let made = 0;
const newAccount = (extra: Record<string, unknown> = {}) =>
  control({ username: `access_${Date.now().toString(36)}_${++made}`, ...extra });

/** The Instagram dialog's Allow for the account, as the tenant's browser sends it: the code, or the refusal. */
async function allowInstagram(cookie: string, accountId: string, untick: string[] = [], dialog = instagramDialog()) {
  return submitDialog(dialog, cookie, (form) => {
    form.set("decision", "allow");
    form.set("account_id", accountId);
    for (const scope of untick) form.delete("permission", scope);
  });
}

/** The Facebook dialog's Allow for the Pages of these accounts, found on the page by their usernames' Page names. */
async function allowFacebook(cookie: string, pageIds: string[], untick: string[] = []) {
  return submitDialog(facebookDialog(), cookie, (form) => {
    form.set("decision", "allow");
    for (const pageId of pageIds) form.append("page_id", pageId);
    for (const scope of untick) form.delete("permission", scope);
  });
}

const codeOf = (response: Response) => {
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!).searchParams.get("code")!;
};

/** A refused dialog: its page, and no way back to the app (so no code). */
async function expectRefused(response: Response, status: number, text: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("location")).toBeNull();
  expect(await response.text()).toContain(text);
}

/** The Page id the Facebook dialog shows for an account, or undefined when it does not offer it. */
async function pageIdFor(cookie: string, username: string): Promise<string | undefined> {
  const html = await openDialog(facebookDialog(), cookie);
  return new RegExp(`value="(\\d+)"> [^<]* · Instagram @${username}<`).exec(html)?.[1];
}

async function instagramTokens(code: string): Promise<{ shortLived: string; longLived: string }> {
  const exchanged = await fetch(here(config.INSTAGRAM_LOGIN.tokenUrl + "/oauth/access_token"), {
    method: "POST",
    body: new URLSearchParams({
      client_id: config.INSTAGRAM_LOGIN.app!.id,
      client_secret: config.INSTAGRAM_LOGIN.app!.secret,
      grant_type: "authorization_code",
      redirect_uri: config.INSTAGRAM_LOGIN.redirectUri,
      code,
    }),
  });
  expect(exchanged.status).toBe(200);
  const shortLived = ((await exchanged.json()) as { data: { access_token: string }[] }).data[0]!.access_token;
  const query = { grant_type: "ig_exchange_token", client_secret: config.INSTAGRAM_LOGIN.app!.secret };
  const long = await fetch(here(`${instagramGraph()}/access_token`, { ...query, access_token: shortLived }));
  expect(long.status).toBe(200);
  return { shortLived, longLived: ((await long.json()) as { access_token: string }).access_token };
}

async function refresh(token: string): Promise<string> {
  const refreshed = await fetch(
    here(`${instagramGraph()}/refresh_access_token`, { grant_type: "ig_refresh_token", access_token: token }),
  );
  expect(refreshed.status).toBe(200);
  return ((await refreshed.json()) as { access_token: string }).access_token;
}

/** A reel published on the account with its control-surface token (not limited): a resumable upload of the sample. */
async function publishReel(accountId: string, token: string): Promise<string> {
  const graph = `${facebookGraph()}/${config.GRAPH_VERSION}`;
  const post = async (url: string, body: Record<string, string>) =>
    (await (
      await fetch(url, { method: "POST", body: new URLSearchParams({ ...body, access_token: token }) })
    ).json()) as {
      id: string;
      uri?: string;
    };
  const container = await post(`${graph}/${accountId}/media`, { media_type: "REELS", upload_type: "resumable" });
  const video = await readFile(SAMPLE);
  const uploaded = await fetch(container.uri!, {
    method: "POST",
    headers: { authorization: `OAuth ${token}`, offset: "0", file_size: String(video.byteLength) },
    body: video,
  });
  expect(uploaded.status).toBe(200);
  await waitFor(
    async () => {
      const status = await fetch(`${graph}/${container.id}?fields=status_code&access_token=${token}`);
      return ((await status.json()) as { status_code?: string }).status_code === "FINISHED";
    },
    { what: "the container to finish", timeoutMs: 60_000 },
  );
  return (await post(`${graph}/${accountId}/media_publish`, { creation_id: container.id })).id;
}

const readInsights = (graph: string, mediaId: string, token: string) =>
  fetch(`${graph}/${config.GRAPH_VERSION}/${mediaId}/insights?metric=views,reach&access_token=${token}`);

async function expectPermissionRefused(response: Response, message: string) {
  expect(response.status).toBe(400);
  expect(((await response.json()) as { error: unknown }).error).toMatchObject({
    code: 10,
    type: "OAuthException",
    message,
  });
}

describe("the login dialogs serve only a person signed in to Dispatch", () => {
  it("without a session (or with a forged or ended one) neither dialog shows accounts or gives a code, GET or POST", async () => {
    const { account_id } = await newAccount();
    const ended = await sessions.create("alpha");
    await sessions.revoke(ended.value);
    for (const cookie of ["", `${SESSION_COOKIE}=forged.cookie`, `${SESSION_COOKIE}=${ended.value}`]) {
      for (const dialog of [instagramDialog(), facebookDialog()]) {
        const page = await fetch(dialog, { headers: { cookie } });
        await expectRefused(page, 403, "Sign in to Dispatch first");
        const form = new URLSearchParams({
          ...Object.fromEntries(dialog.searchParams),
          decision: "allow",
          account_id,
          page_id: "100000000000001",
        });
        const posted = await fetch(`${dialog.origin}${dialog.pathname}`, {
          method: "POST",
          headers: { cookie },
          body: form,
          redirect: "manual",
        });
        await expectRefused(posted, 403, "Sign in to Dispatch first");
      }
    }
  });

  it("a POST from another site carrying the person's cookie is refused as signed out", async () => {
    const { account_id } = await newAccount();
    const cookie = await cookieOf("alpha");
    const dialog = instagramDialog();
    const form = new URLSearchParams({ ...Object.fromEntries(dialog.searchParams), decision: "allow", account_id });
    const posted = await fetch(`${dialog.origin}${dialog.pathname}`, {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "cross-site" },
      body: form,
      redirect: "manual",
    });
    await expectRefused(posted, 403, "Sign in to Dispatch first");
  });
});

describe("one tenant's session cannot get another tenant's account", () => {
  it("an account made for a tenant, its REEL_ACCOUNTS account and one it claimed: offered to it, refused to the other, on both dialogs", async () => {
    const [alpha, beta] = [await cookieOf("alpha"), await cookieOf("beta")];
    const madeFor = await control({ username: `for_alpha_${Date.now()}`, tenant: "alpha" });
    const configured = config.REEL_ACCOUNTS.find((a) => a.tenantId === "alpha")!.accountId;
    const claimedName = `claimed_${Date.now()}`;
    const claimed = await control({ username: claimedName });
    codeOf(await allowInstagram(alpha, claimed.account_id));

    const alphaPage = await openDialog(instagramDialog(), alpha);
    const betaPage = await openDialog(instagramDialog(), beta);
    for (const accountId of [madeFor.account_id, configured, claimed.account_id]) {
      expect(alphaPage).toContain(`value="${accountId}"`);
      expect(betaPage).not.toContain(`value="${accountId}"`);
      await expectRefused(await allowInstagram(beta, accountId), 400, "Pick an account to continue.");
      codeOf(await allowInstagram(alpha, accountId));
    }
    // A Page stands for its account: the other tenant neither sees nor gets it.
    const pageId = await pageIdFor(alpha, claimedName);
    expect(pageId).toBeTruthy();
    expect(await pageIdFor(beta, claimedName)).toBeUndefined();
    await expectRefused(await allowFacebook(beta, [pageId!]), 400, "Pick Pages from the list.");
    codeOf(await allowFacebook(alpha, [pageId!]));
  });

  it("an account made for no one is offered to every tenant until one logs in as it; then only to that one", async () => {
    const username = `unclaimed_${Date.now()}`;
    const { account_id } = await control({ username });
    const [alpha, beta] = [await cookieOf("alpha"), await cookieOf("beta")];
    expect(await openDialog(instagramDialog(), alpha)).toContain(`value="${account_id}"`);
    expect(await openDialog(instagramDialog(), beta)).toContain(`value="${account_id}"`);

    // The Facebook dialog's Allow claims it as Instagram's does.
    codeOf(await allowFacebook(beta, [(await pageIdFor(beta, username))!]));
    expect(await openDialog(instagramDialog(), alpha)).not.toContain(`value="${account_id}"`);
    await expectRefused(await allowInstagram(alpha, account_id), 400, "Pick an account to continue.");
    expect(await openDialog(instagramDialog(), beta)).toContain(`value="${account_id}"`);
    codeOf(await allowInstagram(beta, account_id));
  });

  it("an unknown account and a Page the list does not show are refused the same way, nothing claimed", async () => {
    const alpha = await cookieOf("alpha");
    await expectRefused(await allowInstagram(alpha, "17800000000000000"), 400, "Pick an account to continue.");
    await expectRefused(await allowFacebook(alpha, ["100000000000001"]), 400, "Pick Pages from the list.");
  });
});

describe("the sandbox's own app secrets", () => {
  it("the token endpoints refuse the constants the code once held; the secret under DATA_DIR works", async () => {
    const { account_id } = await newAccount();
    const cookie = await cookieOf("alpha");
    const exchange = (secret: string, code: string) =>
      fetch(here(config.INSTAGRAM_LOGIN.tokenUrl + "/oauth/access_token"), {
        method: "POST",
        body: new URLSearchParams({
          client_id: config.INSTAGRAM_LOGIN.app!.id,
          client_secret: secret,
          grant_type: "authorization_code",
          redirect_uri: config.INSTAGRAM_LOGIN.redirectUri,
          code,
        }),
      });
    const old = await exchange("sandbox-instagram-app-secret", codeOf(await allowInstagram(cookie, account_id)));
    expect(await old.json()).toMatchObject({ error_message: "Error validating client secret." });
    const { shortLived } = await instagramTokens(codeOf(await allowInstagram(cookie, account_id)));
    const longLived = await fetch(
      here(`${instagramGraph()}/access_token`, {
        grant_type: "ig_exchange_token",
        client_secret: "sandbox-instagram-app-secret",
        access_token: shortLived,
      }),
    );
    expect(((await longLived.json()) as { error: unknown }).error).toMatchObject({
      message: "Error validating client secret.",
    });

    const username = `fb_secret_${Date.now()}`;
    await control({ username });
    const code = codeOf(await allowFacebook(cookie, [(await pageIdFor(cookie, username))!]));
    const facebook = (secret: string) =>
      fetch(
        here(`${facebookGraph()}/${config.GRAPH_VERSION}/oauth/access_token`, {
          client_id: config.FACEBOOK_LOGIN.app!.id,
          client_secret: secret,
          redirect_uri: config.FACEBOOK_LOGIN.redirectUri,
          code,
        }),
      );
    expect(((await (await facebook("sandbox-facebook-app-secret")).json()) as { error: unknown }).error).toMatchObject({
      message: "Error validating client secret.",
    });
    expect(await (await facebook(config.FACEBOOK_LOGIN.app!.secret)).json()).toMatchObject({
      access_token: expect.any(String),
    });
  });
});

describe("the permissions a person allowed", () => {
  it("Instagram Login: insights unticked are refused with Meta's code 10 through the long-lived token and its refresh; ticked, answered", async () => {
    // Long-lived tokens lapse within the hour and count as old enough to refresh.
    const account = await newAccount({ token_expires_in: 3600 });
    const mediaId = await publishReel(account.account_id, account.access_token);
    const cookie = await cookieOf("alpha");
    const page = await openDialog(instagramDialog(), cookie);
    expect(page).toMatch(
      /<input type="checkbox" name="permission" value="instagram_business_manage_insights" checked>/,
    );
    expect(page).toMatch(/<input type="checkbox" checked disabled> instagram_business_basic \(required\)/);

    const without = await allowInstagram(cookie, account.account_id, ["instagram_business_manage_insights"]);
    const exchanged = await fetch(here(config.INSTAGRAM_LOGIN.tokenUrl + "/oauth/access_token"), {
      method: "POST",
      body: new URLSearchParams({
        client_id: config.INSTAGRAM_LOGIN.app!.id,
        client_secret: config.INSTAGRAM_LOGIN.app!.secret,
        grant_type: "authorization_code",
        redirect_uri: config.INSTAGRAM_LOGIN.redirectUri,
        code: codeOf(without),
      }),
    });
    const shortAnswer = (await exchanged.json()) as { data: { access_token: string; permissions: string }[] };
    expect(shortAnswer.data[0]!.permissions).toBe("instagram_business_basic,instagram_business_content_publish");
    const { longLived } = await instagramTokens(
      codeOf(await allowInstagram(cookie, account.account_id, ["instagram_business_manage_insights"])),
    );
    const refreshed = await refresh(longLived);
    const refused = "(#10) Application does not have permission for this action";
    for (const token of [shortAnswer.data[0]!.access_token, longLived, refreshed])
      await expectPermissionRefused(await readInsights(instagramGraph(), mediaId, token), refused);

    const allowed = await instagramTokens(codeOf(await allowInstagram(cookie, account.account_id)));
    for (const token of [allowed.longLived, await refresh(allowed.longLived)]) {
      const answer = await readInsights(instagramGraph(), mediaId, token);
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { data: { name: string }[] }).data.map((m) => m.name)).toEqual([
        "views",
        "reach",
      ]);
    }
  });

  it("a required permission cannot be declined: unticking it in the form changes nothing", async () => {
    const { account_id } = await newAccount();
    const cookie = await cookieOf("alpha");
    const response = await submitDialog(instagramDialog(), cookie, (form) => {
      form.set("decision", "allow");
      form.set("account_id", account_id);
      form.delete("permission");
      // Not asked for: never granted, whatever the form says.
      form.append("permission", "instagram_business_manage_messages");
    });
    const exchanged = await fetch(here(config.INSTAGRAM_LOGIN.tokenUrl + "/oauth/access_token"), {
      method: "POST",
      body: new URLSearchParams({
        client_id: config.INSTAGRAM_LOGIN.app!.id,
        client_secret: config.INSTAGRAM_LOGIN.app!.secret,
        grant_type: "authorization_code",
        redirect_uri: config.INSTAGRAM_LOGIN.redirectUri,
        code: codeOf(response),
      }),
    });
    expect(((await exchanged.json()) as { data: { permissions: string }[] }).data[0]!.permissions).toBe(
      "instagram_business_basic",
    );
  });

  it("Facebook Login: a Page token carries the user's permissions; insights and publishing unticked are refused, ticked answered", async () => {
    const username = `fb_scopes_${Date.now()}`;
    const account = await control({ username });
    const mediaId = await publishReel(account.account_id, account.access_token);
    const cookie = await cookieOf("alpha");
    const pageId = (await pageIdFor(cookie, username))!;
    const pageTokenAfter = async (untick: string[]) => {
      const code = codeOf(await allowFacebook(cookie, [pageId], untick));
      const user = (await (
        await fetch(
          here(`${facebookGraph()}/${config.GRAPH_VERSION}/oauth/access_token`, {
            client_id: config.FACEBOOK_LOGIN.app!.id,
            client_secret: config.FACEBOOK_LOGIN.app!.secret,
            redirect_uri: config.FACEBOOK_LOGIN.redirectUri,
            code,
          }),
        )
      ).json()) as { access_token: string };
      const long = (await (
        await fetch(
          here(`${facebookGraph()}/${config.GRAPH_VERSION}/oauth/access_token`, {
            grant_type: "fb_exchange_token",
            client_id: config.FACEBOOK_LOGIN.app!.id,
            client_secret: config.FACEBOOK_LOGIN.app!.secret,
            fb_exchange_token: user.access_token,
          }),
        )
      ).json()) as { access_token: string };
      const pages = (await (
        await fetch(`${facebookGraph()}/${config.GRAPH_VERSION}/me/accounts?access_token=${long.access_token}`)
      ).json()) as { data: { id: string; access_token: string }[] };
      return pages.data.find((p) => p.id === pageId)!.access_token;
    };

    const limited = await pageTokenAfter(["instagram_manage_insights", "instagram_content_publish"]);
    await expectPermissionRefused(
      await readInsights(facebookGraph(), mediaId, limited),
      "(#10) Application does not have permission for this action",
    );
    const created = await fetch(`${facebookGraph()}/${config.GRAPH_VERSION}/${account.account_id}/media`, {
      method: "POST",
      body: new URLSearchParams({ media_type: "REELS", upload_type: "resumable", access_token: limited }),
    });
    await expectPermissionRefused(created, "(#10) Requires instagram_content_publish permission to manage the object");

    const full = await pageTokenAfter([]);
    expect((await readInsights(facebookGraph(), mediaId, full)).status).toBe(200);
  });
});
