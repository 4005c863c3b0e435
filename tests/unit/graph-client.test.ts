import { describe, expect, it } from "vitest";
import { createGraphClient } from "@/lib/graph/client";
import { GraphError, GraphTransportError, isTransientGraphFailure } from "@/lib/graph/error";

const TOKEN = "IGQVJ-secret-token-0123456789";
const ACCOUNT = { accountId: "17841400000000001", accessToken: TOKEN };

interface Seen {
  url: URL;
  method: string;
  contentType: string | null;
  body: string;
}

/** A fetch that records each request and answers from a list. */
function fakeFetch(...answers: (Response | Error | (() => Promise<Response>))[]) {
  const seen: Seen[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    seen.push({
      url: new URL(String(input)),
      method: init?.method ?? "GET",
      contentType: headers.get("content-type"),
      body: String(init?.body ?? ""),
    });
    const answer = answers.shift();
    if (!answer) throw new Error("no more answers");
    if (answer instanceof Error) throw answer;
    return typeof answer === "function" ? answer() : answer;
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

const jsonAnswer = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

const client = (fetch: typeof globalThis.fetch, timeoutMs?: number) =>
  createGraphClient({ graphUrl: "https://graph.example.test/", version: "v21.0", fetch, timeoutMs });

describe("requests", () => {
  it("creates a container with a form-encoded POST, the token in the body and never in the URL", async () => {
    const { fetch, seen } = fakeFetch(jsonAnswer({ id: "17900000000000001" }));
    const answer = await client(fetch).createContainer(ACCOUNT, {
      videoUrl: "https://cdn.example.test/a.mp4?x=1&y=2",
      caption: "Hi & bye #reel",
      shareToFeed: false,
    });
    expect(answer).toEqual({
      id: "17900000000000001",
      uri: null,
      answer: { id: "17900000000000001" },
      fbtraceId: null,
    });
    const [request] = seen;
    expect(request.method).toBe("POST");
    expect(request.url.toString()).toBe(`https://graph.example.test/v21.0/${ACCOUNT.accountId}/media`);
    expect(request.url.toString()).not.toContain(TOKEN);
    expect(request.contentType).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      media_type: "REELS",
      video_url: "https://cdn.example.test/a.mp4?x=1&y=2",
      caption: "Hi & bye #reel",
      share_to_feed: "false",
      access_token: TOKEN,
    });
  });

  it("leaves an absent caption out", async () => {
    const { fetch, seen } = fakeFetch(jsonAnswer({ id: "1" }));
    await client(fetch).createContainer(ACCOUNT, { videoUrl: "https://v.test/a.mp4", shareToFeed: true });
    expect(new URLSearchParams(seen[0].body).has("caption")).toBe(false);
    expect(new URLSearchParams(seen[0].body).get("share_to_feed")).toBe("true");
  });

  it("sends the further reel parameters as Graph takes them: strings, with user_tags, collaborators and trial_params JSON-encoded", async () => {
    const { fetch, seen } = fakeFetch(jsonAnswer({ id: "1" }));
    await client(fetch).createContainer(ACCOUNT, {
      videoUrl: "https://v.test/a.mp4",
      shareToFeed: true,
      reel: {
        cover_url: "https://v.test/cover.jpg",
        thumb_offset: 0,
        audio_name: "Morning run",
        collaborators: ["ana.runs", "bo_b"],
        location_id: "7640348500",
        user_tags: [{ username: "carla", x: 0.5, y: 0.25 }],
        trial_params: { graduation_strategy: "MANUAL" },
      },
    });
    expect(Object.fromEntries(new URLSearchParams(seen[0].body))).toEqual({
      media_type: "REELS",
      video_url: "https://v.test/a.mp4",
      share_to_feed: "true",
      cover_url: "https://v.test/cover.jpg",
      thumb_offset: "0",
      audio_name: "Morning run",
      collaborators: '["ana.runs","bo_b"]',
      location_id: "7640348500",
      user_tags: '[{"username":"carla","x":0.5,"y":0.25}]',
      trial_params: '{"graduation_strategy":"MANUAL"}',
      access_token: TOKEN,
    });
  });

  it("publishes with creation_id in a form body, the token in the body only", async () => {
    const { fetch, seen } = fakeFetch(jsonAnswer({ id: "17800000000000009" }));
    expect(await client(fetch).publishContainer(ACCOUNT, "17900000000000001")).toEqual({ id: "17800000000000009" });
    expect(seen[0].url.toString()).toBe(`https://graph.example.test/v21.0/${ACCOUNT.accountId}/media_publish`);
    expect(seen[0].url.search).toBe("");
    expect(Object.fromEntries(new URLSearchParams(seen[0].body))).toEqual({
      creation_id: "17900000000000001",
      access_token: TOKEN,
    });
  });

  it("reads a container with a GET: fields and the token as query parameters", async () => {
    const { fetch, seen } = fakeFetch(
      jsonAnswer(
        { id: "179", status_code: "IN_PROGRESS", status: "In Progress: Media is still being processed." },
        200,
        { "x-fb-trace-id": "TRACE1" },
      ),
    );
    const status = await client(fetch).readContainer(ACCOUNT, "179");
    expect(status).toEqual({
      id: "179",
      statusCode: "IN_PROGRESS",
      status: "In Progress: Media is still being processed.",
      fbtraceId: "TRACE1",
    });
    expect(seen[0].method).toBe("GET");
    expect(seen[0].url.pathname).toBe("/v21.0/179");
    expect(Object.fromEntries(seen[0].url.searchParams)).toEqual({ fields: "status_code,status", access_token: TOKEN });
    expect(seen[0].body).toBe("");
  });

  it("reads the account's username with a GET of the account node and its own token", async () => {
    const { fetch, seen } = fakeFetch(jsonAnswer({ id: ACCOUNT.accountId, username: "acme_reels" }));
    expect(await client(fetch).readAccount(ACCOUNT)).toEqual({ id: ACCOUNT.accountId, username: "acme_reels" });
    expect(seen[0].method).toBe("GET");
    expect(seen[0].url.pathname).toBe(`/v21.0/${ACCOUNT.accountId}`);
    expect(Object.fromEntries(seen[0].url.searchParams)).toEqual({ fields: "id,username", access_token: TOKEN });
  });

  it("keeps a creation answer without an id whole", async () => {
    const { fetch } = fakeFetch(jsonAnswer({ success: true, uri: "https://rupload.example.test/x" }));
    expect(
      await client(fetch).createContainer(ACCOUNT, { videoUrl: "https://v.test/a.mp4", shareToFeed: true }),
    ).toEqual({
      id: null,
      uri: "https://rupload.example.test/x",
      answer: { success: true, uri: "https://rupload.example.test/x" },
      fbtraceId: null,
    });
  });

  it("creates a resumable container without a video_url and keeps its upload uri", async () => {
    const { fetch, seen } = fakeFetch(
      jsonAnswer({
        id: "17900000000000002",
        uri: "https://rupload.example.test/ig-api-upload/v21.0/17900000000000002",
      }),
    );
    const answer = await client(fetch).createContainer(ACCOUNT, { resumable: true, shareToFeed: true });
    expect(answer).toMatchObject({
      id: "17900000000000002",
      uri: "https://rupload.example.test/ig-api-upload/v21.0/17900000000000002",
    });
    const params = new URLSearchParams(seen[0]?.body);
    expect(params.get("upload_type")).toBe("resumable");
    expect(params.has("video_url")).toBe(false);
  });

  it("keeps a creation answer that is not JSON as text", async () => {
    const { fetch } = fakeFetch(new Response("<html>ok</html>", { status: 200 }));
    expect(
      (await client(fetch).createContainer(ACCOUNT, { videoUrl: "https://v.test/a.mp4", shareToFeed: true })).answer,
    ).toBe("<html>ok</html>");
  });

  it("lists the account's media", async () => {
    const { fetch, seen } = fakeFetch(jsonAnswer({ data: [{ id: "178", caption: "a" }, { nope: 1 }], paging: {} }));
    expect(await client(fetch).listMedia(ACCOUNT, "id,caption", 10)).toEqual([{ id: "178", caption: "a" }]);
    expect(Object.fromEntries(seen[0].url.searchParams)).toEqual({
      fields: "id,caption",
      limit: "10",
      access_token: TOKEN,
    });
  });
});

describe("errors", () => {
  it("parses Graph's error object into a GraphError", async () => {
    const { fetch } = fakeFetch(
      jsonAnswer(
        {
          error: {
            message: "Error validating access token",
            type: "OAuthException",
            code: 190,
            error_subcode: 460,
            is_transient: false,
            fbtrace_id: "AbC123",
          },
        },
        400,
      ),
    );
    const error = await client(fetch)
      .readContainer(ACCOUNT, "179")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphError);
    const e = error as GraphError;
    expect([e.code, e.subcode, e.message, e.fbtraceId, e.isTransient, e.status, e.type]).toEqual([
      190,
      460,
      "Error validating access token",
      "AbC123",
      false,
      400,
      "OAuthException",
    ]);
    expect(e.action).toBe("reconnect-account");
    expect(isTransientGraphFailure(e)).toBe(false);
  });

  it("takes the trace id from the x-fb-trace-id header when the body has none, and codes sent as strings", async () => {
    const { fetch } = fakeFetch(
      jsonAnswer({ error: { message: "Please reduce the amount of calls", code: "4" } }, 400, {
        "x-fb-trace-id": "HDR9",
      }),
    );
    const e = (await client(fetch)
      .publishContainer(ACCOUNT, "179")
      .catch((x: unknown) => x)) as GraphError;
    expect([e.code, e.subcode, e.fbtraceId]).toEqual([4, undefined, "HDR9"]);
    expect(isTransientGraphFailure(e)).toBe(true);
  });

  it.each([
    [500, true],
    [502, true],
    [503, true],
    [429, true],
    [404, false],
    [401, false],
  ])("an HTTP %i without a Graph error object is a transport error (transient: %s)", async (status, transient) => {
    const { fetch } = fakeFetch(new Response("<html>Bad gateway</html>", { status }));
    const e = (await client(fetch)
      .readContainer(ACCOUNT, "179")
      .catch((x: unknown) => x)) as GraphTransportError;
    expect(e).toBeInstanceOf(GraphTransportError);
    expect([e.status, e.isTransient, isTransientGraphFailure(e)]).toEqual([status, transient, transient]);
    expect(e.message).not.toContain(TOKEN);
  });

  it("turns a network failure into a transient transport error whose message holds no token", async () => {
    const refused = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
    });
    const { fetch } = fakeFetch(refused);
    const e = (await client(fetch)
      .readContainer(ACCOUNT, "179")
      .catch((x: unknown) => x)) as GraphTransportError;
    expect(e).toBeInstanceOf(GraphTransportError);
    expect(e.isTransient).toBe(true);
    expect(e.status).toBeNull();
    expect(e.message).toBe("GET /179 failed: ECONNREFUSED");
    expect(e.message).not.toContain(TOKEN);
  });

  it("gives up on a Graph that does not answer in time", async () => {
    const hang = (_input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)),
      );
    const e = (await client(hang as typeof fetch, 30)
      .createContainer(ACCOUNT, { videoUrl: "https://v.test/a.mp4", shareToFeed: true })
      .catch((x: unknown) => x)) as GraphTransportError;
    expect(e).toBeInstanceOf(GraphTransportError);
    expect(e.isTransient).toBe(true);
    expect(e.message).toContain("no answer within 30 ms");
  });

  it("passes the caller's abort through instead of calling it a Graph failure", async () => {
    const controller = new AbortController();
    const hang = (_input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)),
      );
    const pending = client(hang as typeof fetch).readContainer(ACCOUNT, "179", controller.signal);
    controller.abort(new Error("stopping"));
    await expect(pending).rejects.toThrow("stopping");
  });

  it("treats a publish answer without an id as a transient failure (whether it published is unknown)", async () => {
    const { fetch } = fakeFetch(jsonAnswer({}));
    const e = (await client(fetch)
      .publishContainer(ACCOUNT, "179")
      .catch((x: unknown) => x)) as GraphTransportError;
    expect(e).toBeInstanceOf(GraphTransportError);
    expect(e.isTransient).toBe(true);
  });
});

describe("isTransientGraphFailure", () => {
  const graph = (code: number, subcode?: number, isTransient = false, status = 400) =>
    new GraphError({ message: "x", code, subcode, isTransient, status });
  it.each<[string, GraphError, boolean]>([
    ["is_transient on a code the table does not know", graph(1609005, undefined, true), true],
    ["no is_transient on a code the table does not know", graph(1609005, undefined, false), false],
    ["is_transient on a code the table says to fix", graph(100, undefined, true), false],
    ["code 1", graph(1), true],
    ["code 2", graph(2), true],
    ["code 4", graph(4), true],
    ["code 17", graph(17), true],
    ["code 32", graph(32), true],
    ["code 613", graph(613), true],
    ["code 80002", graph(80002), true],
    ["2207001", graph(-1, 2207001), true],
    ["2207003", graph(-2, 2207003), true],
    ["2207008", graph(24, 2207008), true],
    ["2207032", graph(-1, 2207032), true],
    ["HTTP 500 decides nothing", graph(999, undefined, false, 500), false],
    ["-1/2207001 with Meta's HTTP 400", graph(-1, 2207001, false, 400), true],
    ["4/2207051 spam restriction", graph(4, 2207051), false],
    ["190", graph(190, 460), false],
    ["100", graph(100), false],
    ["2207026", graph(352, 2207026), false],
    ["2207052", graph(9004, 2207052), false],
    ["2207042 quota", graph(9, 2207042), false],
  ])("%s", (_name, error, transient) => {
    expect(isTransientGraphFailure(error)).toBe(transient);
  });

  it("is false for errors that are not Graph's", () => {
    expect(isTransientGraphFailure(new Error("bug"))).toBe(false);
  });
});

describe("quota and rate limits", () => {
  it("reads content_publishing_limit", async () => {
    const { fetch, seen } = fakeFetch(
      jsonAnswer({ data: [{ quota_usage: 3, config: { quota_total: 100, quota_duration: 86400 } }] }),
    );
    expect(await client(fetch).readPublishingLimit(ACCOUNT)).toEqual({
      quota_usage: 3,
      quota_total: 100,
      quota_duration: 86400,
    });
    expect(seen[0].url.pathname).toBe("/v21.0/17841400000000001/content_publishing_limit");
    expect(seen[0].url.searchParams.get("fields")).toBe("quota_usage,config");
  });

  it("a Graph error carries the usage headers of its answer: how long Graph says to back off", async () => {
    const usage = {
      "17841400000000001": [
        { type: "instagram", call_count: 100, total_cputime: 10, total_time: 10, estimated_time_to_regain_access: 3 },
      ],
    };
    const { fetch } = fakeFetch(
      jsonAnswer(
        { error: { message: "(#80002) Too many calls", type: "OAuthException", code: 80002, is_transient: true } },
        400,
        { "x-business-use-case-usage": JSON.stringify(usage) },
      ),
    );
    const error = await client(fetch)
      .createContainer(ACCOUNT, { videoUrl: "https://cdn.example.test/a.mp4", shareToFeed: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphError);
    expect((error as GraphError).usage).toMatchObject({ percent: 100, regainAccessMs: 180_000 });
  });
});
