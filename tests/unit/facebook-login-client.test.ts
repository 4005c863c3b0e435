import { describe, expect, it } from "vitest";
import { listFacebookPages, readLinkedInstagramAccount } from "@/lib/accounts/meta-login/facebook-login-client";
import { MetaLoginError } from "@/lib/accounts/meta-login/meta-call";
import type { GraphPacer } from "@/lib/graph/pacing";

/** Facebook Login's Page calls against answers written from Meta's documentation, with a fetch that records. */

const GRAPH = "https://graph.facebook.com";
const login = {
  graphUrl: GRAPH,
  redirectUri: "https://dispatch.example.com/api/accounts/connect/facebook/callback",
  app: { id: "1234567890", secret: "app-secret-0123" },
};

/** `headers`: the usage headers every answer carries. The pacer records what it is told. */
function recordingFetch(answers: unknown[], headers: Record<string, string> = {}) {
  const calls: { url: string; authorization: string | null }[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(input), authorization: new Headers(init?.headers).get("authorization") });
    const body = answers.shift();
    const status = body && typeof body === "object" && "error" in body ? 400 : 200;
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
  }) as typeof globalThis.fetch;
  const told: Parameters<GraphPacer["after"]>[] = [];
  const pacer: GraphPacer = {
    before: async () => ({ holdMs: 0 }),
    after: async (...args) => {
      told.push(args);
    },
  };
  return { fetch, calls, told, deps: { fetch, version: "v21.0", pacer } };
}

describe("listFacebookPages", () => {
  it("sends the user token in a header, follows paging.next on the Graph host without its token, and stops at another host", async () => {
    const { deps, calls } = recordingFetch([
      {
        data: [{ id: "101", name: "First Page", access_token: "PAGE-1", category: "Brand", tasks: ["MANAGE"] }],
        paging: { next: `${GRAPH}/v21.0/900/accounts?access_token=USER-TOKEN&limit=100&after=QVFI` },
      },
      {
        data: [
          { id: "102", name: "Second Page", access_token: "PAGE-2" },
          { id: "103", name: "No token" },
        ],
        paging: { next: "https://elsewhere.example/v21.0/900/accounts?after=QVFJ" },
      },
    ]);
    const pages = await listFacebookPages(deps, login, "USER-TOKEN");
    expect(pages).toEqual([
      { id: "101", name: "First Page", accessToken: "PAGE-1" },
      { id: "102", name: "Second Page", accessToken: "PAGE-2" },
    ]);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.url).toBe(`${GRAPH}/v21.0/me/accounts?fields=id%2Cname%2Caccess_token&limit=100`);
    expect(calls.every((call) => call.authorization === "OAuth USER-TOKEN")).toBe(true);
    expect(calls[1]!.url).toBe(`${GRAPH}/v21.0/900/accounts?limit=100&after=QVFI`);
    expect(calls.some((call) => call.url.includes("USER-TOKEN"))).toBe(false);
  });

  it("turns Graph's error object into a MetaLoginError in Meta's words, without the token", async () => {
    const { deps } = recordingFetch([
      { error: { message: "Error validating access token: Session has expired", type: "OAuthException", code: 190 } },
    ]);
    const failure = await listFacebookPages(deps, login, "USER-TOKEN").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MetaLoginError);
    expect((failure as MetaLoginError).message).toBe(
      "Facebook refused to list your Pages: Error validating access token: Session has expired.",
    );
    expect((failure as MetaLoginError).message).not.toContain("USER-TOKEN");
  });

  it("says a refusal for a rate limit is one and when to try again, and tells the pacer what Meta's headers said", async () => {
    const business = {
      "900": [{ type: "pages", call_count: 100, total_cputime: 4, total_time: 5, estimated_time_to_regain_access: 12 }],
    };
    const { deps, told } = recordingFetch(
      [
        {
          error: {
            message: "(#4) Application request limit reached",
            type: "OAuthException",
            code: 4,
            is_transient: true,
          },
        },
      ],
      {
        "x-app-usage": JSON.stringify({ call_count: 100, total_time: 25, total_cputime: 25 }),
        "x-business-use-case-usage": JSON.stringify(business),
      },
    );
    const failure = await listFacebookPages(deps, login, "USER-TOKEN").catch((error: unknown) => error);
    expect((failure as MetaLoginError).message).toBe(
      "Facebook refused to list your Pages: (#4) Application request limit reached. Facebook is rate limiting " +
        "Dispatch's calls (application rate limit): try again in about 12 minutes.",
    );
    expect((failure as MetaLoginError).graphError?.usage?.regainAccessMs).toBe(12 * 60_000);
    // No stored account is behind a login's call: the pacer counts it against the app (and the ids Meta named).
    expect(told).toEqual([
      [
        null,
        expect.objectContaining({
          app: { percent: 100 },
          accounts: { "900": { percent: 100, regainAccessMs: 720_000 } },
        }),
        { rateLimitCode: 4 },
      ],
    ]);
  });
});

describe("readLinkedInstagramAccount", () => {
  const page = { id: "101", name: "First Page", accessToken: "PAGE-1" };

  it("reads instagram_business_account{id,username} with the Page token; a Page without one answers null", async () => {
    const { deps, calls } = recordingFetch([
      { instagram_business_account: { id: "17841400000000001", username: "first" }, id: "101" },
      { id: "101" },
    ]);
    expect(await readLinkedInstagramAccount(deps, login, page)).toEqual({
      accountId: "17841400000000001",
      username: "first",
    });
    expect(await readLinkedInstagramAccount(deps, login, page)).toBeNull();
    expect(calls[0]).toEqual({
      url: `${GRAPH}/v21.0/101?fields=instagram_business_account%7Bid%2Cusername%7D`,
      authorization: "OAuth PAGE-1",
    });
  });
});
