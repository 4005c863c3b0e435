import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGraphClient, type GraphClient } from "@/lib/graph/client";
import {
  graphFailureAction,
  isGraphFailure,
  isTransientGraphFailure,
  subcodeFromContainerStatus,
} from "@/lib/graph/error";
import { describeGraphError, type GraphErrorAction } from "@/lib/graph/error-table";
import type { GraphPacer } from "@/lib/graph/pacing";
import type { GraphUsage } from "@/lib/graph/usage";

/**
 * The client's reading of Graph's answers, held against answers written from Meta's documentation
 * (../shared/spec/graph-reference.md: the error-code table, the notes on missing tokens, foreign
 * objects and HTTP status, the resumable upload and the usage headers) — never against the
 * sandbox, so the two cannot agree with each other and both be wrong. This file imports nothing
 * from lib/graph/sandbox; one case per row of the reference's error table, then the notes below it.
 *
 * Every answer goes through the real client (createGraphClient) over a fetch that replies with the
 * status, headers and body Meta sends; the case checks what the client makes of it: the action the
 * publish flow takes (GRAPH_ERRORS' vocabulary) and whether it is tried again.
 */

const ACCOUNT = { accountId: "17841400000000001", accessToken: "IGQVJ-fixture-token" };
const CONTAINER = "17900000000000001";

interface MetaAnswer<Body = unknown> {
  status: number;
  headers?: Record<string, string>;
  body: Body;
}

interface MetaErrorBody {
  error: { message: string; type: string; code: number; error_subcode?: number; [field: string]: unknown };
}

/** A Graph error object as Meta's error-code reference shows it: HTTP 400, the fields in Meta's order. */
function metaError(
  code: number,
  message: string,
  extra: {
    subcode?: number;
    type?: string;
    transient?: boolean;
    title?: string;
    userMessage?: string;
    status?: number;
  } = {},
): MetaAnswer<MetaErrorBody> {
  return {
    status: extra.status ?? 400,
    headers: {
      "content-type": "application/json; charset=UTF-8",
      "x-fb-trace-id": "A6LJylpZRKw2xKLFsAP-cJh",
      "www-authenticate": 'OAuth "Facebook Platform" "invalid_request"',
    },
    body: {
      error: {
        message,
        type: extra.type ?? "OAuthException",
        code,
        ...(extra.subcode === undefined ? {} : { error_subcode: extra.subcode }),
        is_transient: extra.transient ?? false,
        ...(extra.title ? { error_user_title: extra.title } : {}),
        ...(extra.userMessage ? { error_user_msg: extra.userMessage } : {}),
        fbtrace_id: "A6LJylpZRKw2xKLFsAP-cJh",
      },
    },
  };
}

function replying(answer: MetaAnswer): typeof fetch {
  return (async () =>
    new Response(JSON.stringify(answer.body), { status: answer.status, headers: answer.headers })) as typeof fetch;
}

const clientFor = (answer: MetaAnswer, pacer?: GraphPacer): GraphClient =>
  createGraphClient({ graphUrl: "https://graph.instagram.com", version: "v21.0", fetch: replying(answer), pacer });

/** What the client makes of a refused status read (a GET), or of a refused publish (a POST). */
async function refusal(answer: MetaAnswer, call: "read" | "publish" = "read"): Promise<unknown> {
  const client = clientFor(answer);
  const pending =
    call === "read" ? client.readContainer(ACCOUNT, CONTAINER) : client.publishContainer(ACCOUNT, CONTAINER);
  return pending.then(
    () => expect.unreachable("Meta's answer was an error"),
    (error: unknown) => error,
  );
}

async function decisionOf(
  answer: MetaAnswer,
  call: "read" | "publish" = "read",
): Promise<{ action: GraphErrorAction; retried: boolean }> {
  const error = await refusal(answer, call);
  expect(isGraphFailure(error), String(error)).toBe(true);
  return { action: graphFailureAction(error as never), retried: isTransientGraphFailure(error) };
}

interface Row {
  /** The row of graph-reference.md's table, as written there. */
  row: string;
  answers: MetaAnswer[];
  /** "what a client does", in the client's words. */
  action: GraphErrorAction;
  call?: "read" | "publish";
}

const ROWS: Row[] = [
  {
    row: "1, 2 | temporary / service error | retry with backoff",
    answers: [
      metaError(1, "An unknown error occurred", { transient: true }),
      metaError(2, "An unexpected error has occurred. Please retry your request later.", { transient: true }),
    ],
    action: "retry",
  },
  {
    row: "4, 17, 32, 613, 80002 | rate limiting (app, user, page, custom, Instagram) | back off",
    answers: [
      metaError(4, "(#4) Application request limit reached", { transient: true }),
      metaError(17, "(#17) User request limit reached", { transient: true }),
      metaError(32, "(#32) Page request limit reached", { transient: true }),
      metaError(613, "(#613) Calls to this api have exceeded the rate limit.", { transient: true }),
      metaError(80002, "(#80002) There have been too many calls to this Instagram account. Wait a bit and try again.", {
        transient: true,
      }),
    ],
    action: "wait-rate-limit",
  },
  {
    row: "10, 200–299 | permission missing | reconnect the account with the right scopes",
    answers: [
      metaError(10, "(#10) Application does not have permission for this action"),
      metaError(200, "(#200) Requires instagram_content_publish permission to manage the object"),
      metaError(299, "(#299) Permissions error"),
    ],
    action: "reconnect-account",
  },
  {
    row: "100 | invalid parameter | fix the request",
    answers: [metaError(100, "(#100) The parameter video_url is required")],
    action: "fix-input",
    call: "publish",
  },
  {
    row: "190 (458, 459, 460, 463, 467) | access token invalid / expired / password changed | reconnect the account",
    answers: [
      metaError(190, "Invalid OAuth access token - Cannot parse access token"),
      metaError(190, "Error validating access token: The user has not authorized application 1234567890.", {
        subcode: 458,
      }),
      metaError(
        190,
        "Error validating access token: You cannot access the app till you log in to www.facebook.com and follow the instructions given.",
        { subcode: 459 },
      ),
      metaError(
        190,
        "Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.",
        { subcode: 460 },
      ),
      metaError(
        190,
        "Error validating access token: Session has expired on Monday, 19-Jun-23 06:29:46 PDT. The current time is Tuesday, 04-Jul-23 02:11:32 PDT.",
        { subcode: 463 },
      ),
      metaError(190, "Error validating access token: The session is invalid because the user logged out.", {
        subcode: 467,
      }),
    ],
    action: "reconnect-account",
  },
  {
    row: "368 | blocked for policy | stop",
    answers: [metaError(368, "The action attempted has been deemed abusive or is otherwise disallowed")],
    action: "stop",
    call: "publish",
  },
  {
    row: "-1 / 2207001 | server error | retry",
    answers: [
      metaError(-1, "An unexpected error has occurred. Please retry your request later.", {
        subcode: 2207001,
        title: "Instagram server error",
        userMessage: "Instagram server error. Try again.",
      }),
    ],
    action: "retry",
  },
  {
    row: "-1 / 2207032 | could not create the container | retry",
    answers: [
      metaError(-1, "Create media fail, please try to re-create media", {
        subcode: 2207032,
        title: "Create media fail",
        userMessage: "Create media fail, please try to re-create media",
      }),
    ],
    action: "retry",
    call: "publish",
  },
  {
    row: "-1 / 2207053 | unknown upload error | new container",
    answers: [
      metaError(-1, "unknown upload error", {
        subcode: 2207053,
        title: "Upload failed",
        userMessage: "unknown upload error",
      }),
    ],
    action: "new-container",
    call: "publish",
  },
  {
    row: "-2 / 2207003 | timed out downloading the media | retry",
    answers: [
      metaError(-2, "It takes too long to download the media.", {
        subcode: 2207003,
        title: "Timeout",
        userMessage: "It takes too long to download the media.",
      }),
    ],
    action: "retry",
    call: "publish",
  },
  {
    row: "-2 / 2207020 | media expired | new container",
    answers: [
      metaError(-2, "The media you are trying to access has expired. Please try to upload again.", {
        subcode: 2207020,
        title: "Media expired",
        userMessage: "The media you are trying to access has expired. Please try to upload again.",
      }),
    ],
    action: "new-container",
    call: "publish",
  },
  {
    row: "9 / 2207042 | daily publishing limit reached | wait for the quota window",
    answers: [
      metaError(9, "You reached maximum number of posts that is allowed to be published by Content Publishing API.", {
        subcode: 2207042,
        title: "Max. number of posts reached",
        userMessage: "You reached maximum number of posts that is allowed to be published by Content Publishing API.",
      }),
    ],
    action: "wait-quota",
    call: "publish",
  },
  {
    row: "24 / 2207006 | media not found | new container",
    answers: [
      metaError(24, `The media with id ${CONTAINER} cannot be found`, {
        subcode: 2207006,
        title: "Media not found",
        userMessage: "The media was not found.",
      }),
    ],
    action: "new-container",
    call: "publish",
  },
  {
    row: "24 / 2207008 | temporary publish error | retry 1–2 times within 30 s – 2 min, then a new container",
    answers: [
      metaError(24, "Media builder does not exist or has expired", {
        subcode: 2207008,
        title: "Media builder not found",
        userMessage: "Temporary error publishing a container. Try again.",
      }),
    ],
    action: "retry",
    call: "publish",
  },
  {
    row: "25 / 2207050 | account restricted | the user must act in the app",
    answers: [
      metaError(25, "The Instagram account is restricted.", {
        subcode: 2207050,
        title: "Restricted account",
        userMessage: "The app user's Instagram Professional account is inactive, checkpointed, or restricted.",
      }),
    ],
    action: "stop",
    call: "publish",
  },
  {
    row: "352 / 2207026 | unsupported video format | fix the video",
    answers: [
      metaError(352, "The video format is not supported. Please check spec for supported video format", {
        subcode: 2207026,
        title: "Unsupported format",
        userMessage: "The video format is not supported.",
      }),
    ],
    action: "fix-input",
    call: "publish",
  },
  {
    row: "9004 / 2207052 | media could not be fetched from the URL | make the URL public and valid",
    answers: [
      metaError(9004, "Only photo or video can be accepted as media type.", {
        subcode: 2207052,
        title: "Media download has failed. The media URI doesn't meet our requirements.",
        userMessage:
          "The media could not be fetched from this URI: https://videos.example/reel.mp4. Please check the limitations in the developer documentation.",
      }),
    ],
    action: "fix-input",
    call: "publish",
  },
  {
    row: "9007 / 2207027 | media not ready for publishing | wait for FINISHED",
    answers: [
      metaError(9007, "Media ID is not available", {
        subcode: 2207027,
        title: "Media Not Ready",
        userMessage: "The media is not ready for publishing, please wait for a moment",
      }),
    ],
    action: "not-ready",
    call: "publish",
  },
];

describe("graph-reference.md's error table, row by row", () => {
  it.each(ROWS.map((r) => [r.row, r] as const))("%s", async (_row, { answers, action, call }) => {
    for (const answer of answers) {
      const decision = await decisionOf(answer, call);
      const { code, error_subcode } = (answer.body as { error: { code: number; error_subcode?: number } }).error;
      expect(decision.action, `${code}/${error_subcode ?? "-"}`).toBe(action);
      // Tried again in place only when the row says retry; a wait is a wait, whatever is_transient said.
      if (action === "retry") expect(decision.retried, `${code}/${error_subcode ?? "-"}`).toBe(true);
      if (action !== "retry" && action !== "wait-rate-limit")
        expect(decision.retried, `${code}/${error_subcode ?? "-"}`).toBe(false);
    }
  });

  it("covers every row of the table", () => {
    expect(ROWS).toHaveLength(18);
  });
});

describe("missing tokens, foreign objects, HTTP status", () => {
  it("a call without a token is 104, and asks for the account to be connected (not an invented 190)", async () => {
    const error = await refusal(metaError(104, "An access token is required to request this resource."));
    expect(error).toMatchObject({ code: 104, type: "OAuthException" });
    expect(graphFailureAction(error as never)).toBe("reconnect-account");
    expect(isTransientGraphFailure(error)).toBe(false);
  });

  it.each([
    ["GraphMethodException", "get", "read"],
    ["IGApiException", "post", "publish"],
  ] as const)(
    "an object the token cannot see is 100/33 %s: the request is wrong, the token is not",
    async (type, verb, call) => {
      const message = `Unsupported ${verb} request. Object with ID '${CONTAINER}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`;
      const error = await refusal(metaError(100, message, { subcode: 33, type }), call);
      expect(error).toMatchObject({ code: 100, subcode: 33, type, message });
      expect(graphFailureAction(error as never)).toBe("fix-input");
      expect(isTransientGraphFailure(error)).toBe(false);
    },
  );

  it("an unknown edge (2500) and an unknown field (100) are requests to fix", async () => {
    expect(await decisionOf(metaError(2500, `Unknown path components: /${ACCOUNT.accountId}/stories`))).toEqual({
      action: "fix-input",
      retried: false,
    });
    expect(
      await decisionOf(
        metaError(100, "(#100) Tried accessing nonexisting field (bogus) on node type (ShadowIGMediaBuilder)"),
      ),
    ).toEqual({ action: "fix-input", retried: false });
  });

  it("keeps 190/463's message as Meta words it, Pacific time and all", async () => {
    const message =
      "Error validating access token: Session has expired on Monday, 19-Jun-23 06:29:46 PDT. The current time is Tuesday, 04-Jul-23 02:11:32 PDT.";
    expect(await refusal(metaError(190, message, { subcode: 463 }))).toMatchObject({
      code: 190,
      subcode: 463,
      message,
      action: "reconnect-account",
    });
  });

  it("4/2207051 is a spam or abuse restriction: stop and tell the person, never a rate-limit wait", async () => {
    const answer = metaError(
      4,
      "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
      {
        subcode: 2207051,
        transient: false,
        title: "Action blocked",
        userMessage: "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
      },
    );
    expect(await decisionOf(answer, "publish")).toEqual({ action: "stop", retried: false });
  });

  it("decides retries from is_transient and the table, never from the HTTP status", async () => {
    // -1/2207001 comes with HTTP 400 and is retried all the same.
    expect(
      await decisionOf(metaError(-1, "An unexpected error has occurred.", { subcode: 2207001, status: 400 })),
    ).toEqual({ action: "retry", retried: true });
    // A parameter error is not retried even if an HTTP 500 carried it.
    expect(await decisionOf(metaError(100, "(#100) Invalid parameter", { status: 500 }))).toEqual({
      action: "fix-input",
      retried: false,
    });
    // A code the table does not know: Graph's is_transient decides, whatever the status.
    expect(await decisionOf(metaError(1609005, "Unknown error", { status: 500, transient: false }))).toMatchObject({
      retried: false,
    });
    expect(await decisionOf(metaError(1609005, "Unknown error", { status: 400, transient: true }))).toEqual({
      action: "retry",
      retried: true,
    });
  });
});

describe("caption limits (graph-reference.md: over 2,200 characters or 30 hashtags, over 20 @-tags)", () => {
  const create = (answer: MetaAnswer) =>
    clientFor(answer)
      .createContainer(ACCOUNT, {
        videoUrl: "https://videos.example/reel.mp4",
        caption: "#a ".repeat(31),
        shareToFeed: true,
      })
      .then(
        () => expect.unreachable("Meta's answer was an error"),
        (error: unknown) => error,
      );

  it.each([
    [
      "36004 / 2207010: over 2,200 characters or 30 hashtags",
      metaError(36004, "The caption is too long.", { subcode: 2207010, title: "Caption too long" }),
    ],
    [
      "100 / 2207040: over 20 @-tags",
      metaError(100, "(#100) Too many tags.", { subcode: 2207040, title: "Too many tags" }),
    ],
  ])("%s is a request to fix, never sent again as it is", async (_case, answer) => {
    const error = await create(answer);
    expect(isGraphFailure(error), String(error)).toBe(true);
    expect(graphFailureAction(error as never)).toBe("fix-input");
    expect(isTransientGraphFailure(error)).toBe(false);
    expect(describeGraphError(answer.body.error.code, answer.body.error.error_subcode).headline).toMatch(/caption/i);
  });
});

describe("a container's ERROR status text", () => {
  it("names its failure as Meta words it: 'error code N'", () => {
    expect(subcodeFromContainerStatus("Error: Media upload has failed with error code 2207082")).toBe(2207082);
    expect(subcodeFromContainerStatus("Error: Media upload has failed with error code 2207026")).toBe(2207026);
    expect(subcodeFromContainerStatus("Error: the video could not be fetched (2207052)")).toBe(2207052);
    expect(subcodeFromContainerStatus("Error: something else")).toBeUndefined();
  });
});

describe("the resumable upload's own failures", () => {
  let dir: string;
  let video: { path: string; size: number };
  const uri = `https://rupload.facebook.com/ig-api-upload/v21.0/${CONTAINER}`;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "graph-meta-answers-"));
    video = { path: path.join(dir, "reel.mp4"), size: 16 };
    await writeFile(video.path, Buffer.alloc(16));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const upload = (answer: MetaAnswer) =>
    clientFor(answer)
      .uploadVideo(ACCOUNT, uri, video)
      .then(
        () => expect.unreachable("the upload failed"),
        (error: unknown) => error,
      );

  it("reads {debug_info} (not a Graph error object): retriable → send again", async () => {
    const error = await upload({
      status: 500,
      body: {
        debug_info: { retriable: true, type: "ServiceUnavailableError", message: "Service temporarily unavailable" },
      },
    });
    expect(error).toMatchObject({
      retriable: true,
      type: "ServiceUnavailableError",
      message: "Service temporarily unavailable",
    });
    expect(graphFailureAction(error as never)).toBe("retry");
    expect(isTransientGraphFailure(error)).toBe(true);
  });

  it("a processing failure that is not retriable is not sent again: a new container", async () => {
    const error = await upload({
      status: 400,
      body: { debug_info: { retriable: false, type: "ProcessingFailedError", message: "Request processing failed" } },
    });
    expect(graphFailureAction(error as never)).toBe("new-container");
    expect(isTransientGraphFailure(error)).toBe(false);
  });

  it("a refused token, in Meta's documented body, asks for the account to be reconnected whatever the status", async () => {
    // graph-reference.md: the message is itself JSON; Meta does not document the HTTP status.
    const refused = {
      debug_info: {
        retriable: false,
        type: "ProcessingFailedError",
        message: '{"success":false,"error":{"message":"unauthorized user request"}}',
      },
    };
    for (const status of [400, 401, 403, 500]) {
      const error = await upload({ status, body: refused });
      expect(graphFailureAction(error as never), `HTTP ${status}`).toBe("reconnect-account");
      expect(isTransientGraphFailure(error), `HTTP ${status}`).toBe(false);
    }
  });

  it("another ProcessingFailedError with a JSON message is not a refused token: a new container", async () => {
    const error = await upload({
      status: 400,
      body: {
        debug_info: {
          retriable: false,
          type: "ProcessingFailedError",
          message: '{"success":false,"error":{"message":"partial upload"}}',
        },
      },
    });
    expect(graphFailureAction(error as never)).toBe("new-container");
  });

  it("an HTTP 401 says the token was refused, whatever the body's type", async () => {
    const error = await upload({
      status: 401,
      body: { debug_info: { retriable: false, type: "ProcessingFailedError", message: "Request processing failed" } },
    });
    expect(graphFailureAction(error as never)).toBe("reconnect-account");
  });

  it("answers success as Meta does", async () => {
    await clientFor({ status: 200, body: { success: true, message: "Upload successful." } }).uploadVideo(
      ACCOUNT,
      uri,
      video,
    );
  });
});

describe("the usage headers", () => {
  it("are read on a successful answer, not only on errors, for the account that called", async () => {
    const seen: { accountId: string | null; usage: GraphUsage | undefined }[] = [];
    const pacer: GraphPacer = {
      before: async () => ({ holdMs: 0 }),
      after: async (accountId, usage) => void seen.push({ accountId, usage }),
    };
    const answer: MetaAnswer = {
      status: 200,
      headers: {
        "x-app-usage": JSON.stringify({ call_count: 28, total_time: 25, total_cputime: 25 }),
        "x-business-use-case-usage": JSON.stringify({
          [ACCOUNT.accountId]: [
            { type: "instagram", call_count: 82, total_cputime: 4, total_time: 5, estimated_time_to_regain_access: 0 },
          ],
        }),
      },
      body: { id: CONTAINER, status_code: "IN_PROGRESS", status: "In Progress: Media is still being processed." },
    };
    const status = await clientFor(answer, pacer).readContainer(ACCOUNT, CONTAINER);
    expect(status.statusCode).toBe("IN_PROGRESS");
    expect(seen).toEqual([
      {
        accountId: ACCOUNT.accountId,
        usage: {
          percent: 82,
          regainAccessMs: 0,
          app: { percent: 28 },
          accounts: { [ACCOUNT.accountId]: { percent: 82, regainAccessMs: 0 } },
        },
      },
    ]);
  });

  it("estimated_time_to_regain_access is minutes", async () => {
    const answer = metaError(
      80002,
      "(#80002) There have been too many calls to this Instagram account. Wait a bit and try again.",
      { transient: true },
    );
    answer.headers = {
      ...answer.headers,
      "x-business-use-case-usage": JSON.stringify({
        [ACCOUNT.accountId]: [
          { type: "instagram", call_count: 100, total_cputime: 10, total_time: 12, estimated_time_to_regain_access: 7 },
        ],
      }),
    };
    expect(await refusal(answer)).toMatchObject({ code: 80002, usage: { percent: 100, regainAccessMs: 7 * 60_000 } });
  });
});
