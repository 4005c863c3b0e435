import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Producer } from "kafkajs";
import { describe, expect, it } from "vitest";
import type {
  ContainerStatus,
  CreateContainerAnswer,
  CreateContainerInput,
  GraphClient,
  MediaItem,
} from "@/lib/graph/client";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { GraphError, GraphPaused, GraphTransportError } from "@/lib/graph/error";
import { GraphUploadError } from "@/lib/graph/upload-error";
import type { PublicationView } from "@/lib/reels/publication";
import { appendEvent, publicationKeys, readPublicationRecord } from "@/lib/reels/publication-record";
import { recordReelUsage } from "@/lib/usage/record-usage";
import { TOPICS } from "@/lib/topics";
import { readPublication } from "@/lib/reels/read-publication";
import { cancelPublication } from "@/lib/reels/cancel-publication";
import { resumePublication } from "@/lib/reels/resume-publication";
import { retryPublication } from "@/lib/reels/retry-publication";
import { releaseWaitingPublications } from "@/lib/reels/release-waiting-publications";
import { recordUpload } from "@/lib/uploads/upload-store";
import { runPublication, type PublicationDeps, type PublicationOutcome } from "@/lib/reels/run-publication";
import { submitPublication } from "@/lib/reels/submit-publication";
import { createUploadUrls } from "@/lib/reels/upload-for-graph";
import { updatePublication } from "@/lib/reels/update-publication";
import { realRedisPerFile } from "./real-redis";

/**
 * The publish flow against a scripted fake Graph and a real Redis (the flow's state and its Lua
 * scripts are the point). Time is a fake clock that sleeps advance, so nothing here waits.
 */

const TENANT = "acme";
const ACCOUNT = { tenantId: TENANT, accountId: "17841400000000001", accessToken: "TOKEN-never-shown" };
const CONTAINER = "17900000000000001";
const POST = "17800000000000042";

const redis = realRedisPerFile();
/** Its token is refused by the test that says so; no other test publishes with it. */
const REFUSED = { tenantId: TENANT, accountId: "17841400000000002", accessToken: "TOKEN-refused" };
/** Publishes an uploaded video; its token is refused at the upload by the test that uses it. */
const UPLOADER = { tenantId: TENANT, accountId: "17841400000000003", accessToken: "TOKEN-uploader" };
let accounts: ConnectedAccounts | undefined;
/** The accounts seeded over the real Redis, as REEL_ACCOUNTS seeds them in production. */
const connected = () => (accounts ??= new ConnectedAccounts(redis(), randomBytes(32), [ACCOUNT, REFUSED, UPLOADER]));

type Step<T> = T | Error | (() => T | Promise<T>);

/** A Graph whose answers are scripted per method, in order; a call past the script fails the test. */
function scriptedGraph(script: {
  create?: Step<CreateContainerAnswer>[];
  read?: Step<ContainerStatus>[];
  publish?: Step<{ id: string }>[];
  media?: MediaItem[];
}) {
  const calls = { create: 0, read: 0, publish: 0, readMedia: 0, listMedia: 0 };
  const take = async <T>(queue: Step<T>[] | undefined, name: keyof typeof calls): Promise<T> => {
    calls[name]++;
    const next = queue?.shift();
    if (next === undefined) throw new Error(`unexpected ${name} call #${calls[name]}`);
    if (next instanceof Error) throw next;
    return typeof next === "function" ? (next as () => T | Promise<T>)() : next;
  };
  const graph: GraphClient = {
    createContainer: () => take(script.create, "create"),
    readContainer: () => take(script.read, "read"),
    publishContainer: () => take(script.publish, "publish"),
    uploadVideo: async () => {
      throw new Error("unexpected upload");
    },
    readMedia: async (_account, id) => {
      calls.readMedia++;
      return { id, permalink: `https://sandbox.test/reel/${id}` };
    },
    listMedia: async () => {
      calls.listMedia++;
      return script.media ?? [];
    },
    readAccount: async (account) => ({ id: account.accountId }),
    readPublishingLimit: async () => ({ quota_usage: 0, quota_total: 100, quota_duration: 86400 }),
    readMediaInsights: async () => {
      throw new Error("unexpected insights read");
    },
  };
  return { graph, calls };
}

const created = (id: string | null = CONTAINER, answer: unknown = { id }): CreateContainerAnswer => ({
  id,
  uri: null,
  answer,
  fbtraceId: "TRACE-C",
});
const status = (statusCode: string, text: string | null = null): ContainerStatus => ({
  id: CONTAINER,
  statusCode,
  status: text,
  fbtraceId: "TRACE-S",
});
const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);
const graphError = (code: number, subcode?: number, message = "Graph said no") =>
  new GraphError({ message, code, subcode, fbtraceId: "TRACE-E" });

interface Harness {
  deps: PublicationDeps;
  sleeps: number[];
  clock: { now: number };
}

/** What the flow announced on reels.publication.events, by every harness of this file. */
const announced: { topic: string; key: string; value: Record<string, unknown> }[] = [];
const announcer = {
  send: async ({ topic, messages }: { topic: string; messages: { key: string; value: string }[] }) => {
    for (const m of messages) announced.push({ topic, key: m.key, value: JSON.parse(m.value) });
    return [];
  },
} as unknown as Producer;

function harness(graph: GraphClient, over: Partial<PublicationDeps> = {}): Harness {
  const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
  const sleeps: number[] = [];
  const deps: PublicationDeps = {
    redis: redis(),
    producer: announcer,
    graphs: { default: graph, forAccount: () => graph },
    connected: connected(),
    log: () => {},
    workerId: `worker-${randomUUID().slice(0, 8)}`,
    pollIntervalMs: 50,
    pollAttempts: 5,
    retry: { retries: 3, baseMs: 100, maxMs: 1000 },
    now: () => clock.now,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      clock.now += ms;
      await Promise.resolve();
      signal.throwIfAborted();
    },
    ...over,
  };
  return { deps, sleeps, clock };
}

const sentMessages: { key: string; value: string }[] = [];
const fakeProducer = async () =>
  ({
    send: async ({ messages }: { messages: { key: string; value: string }[] }) => {
      sentMessages.push(...messages);
      return [];
    },
  }) as unknown as Producer;

async function newPublication(
  h: Harness,
  input: Partial<{ caption: string; publish_at: string; account_id: string; upload_id: string }> = {},
): Promise<string> {
  const source = input.upload_id ? { upload_id: input.upload_id } : { video_url: "https://videos.test/reel.mp4" };
  const { publication } = await submitPublication(
    { redis: redis(), producer: fakeProducer, connected: connected(), now: () => new Date(h.clock.now) },
    TENANT,
    {
      account_id: input.account_id ?? ACCOUNT.accountId,
      ...source,
      caption: input.caption ?? `caption ${randomUUID()}`,
      share_to_feed: true,
      publish_at: input.publish_at,
    },
  );
  return publication.publication_id;
}

const control = (shutdown = new AbortController().signal) => ({
  heartbeat: async () => {},
  shutdown,
  runId: randomUUID(),
});
const read = async (id: string) => (await readPublication(redis(), TENANT, id)) as PublicationView;
const stepNames = (p: PublicationView) => p.steps.map((s) => s.step);

interface FlowCase {
  name: string;
  script: Parameters<typeof scriptedGraph>[0];
  outcome: PublicationOutcome;
  expect: (p: PublicationView, calls: ReturnType<typeof scriptedGraph>["calls"], h: Harness) => void;
}

describe("a publication's announcements", () => {
  it("announces the outcome after its final write, keyed by tenant, and again when a redelivered message finds it settled unannounced", async () => {
    const { graph } = scriptedGraph({ create: [created()], read: [status("FINISHED")], publish: [{ id: POST }] });
    const h = harness(graph);
    const id = await newPublication(h);
    const mine = () => announced.filter((a) => a.value.publication_id === id);
    expect(await runPublication(h.deps, id, control())).toBe("published");
    // With the publication as GET returns it once published: what its webhook sends.
    const settled = {
      topic: "reels.publication.events",
      key: TENANT,
      value: {
        publication_id: id,
        tenant_id: TENANT,
        kind: "settled",
        status: "PUBLISHED",
        publication: await read(id),
      },
    };
    expect(mine()).toEqual([settled]);
    // Redelivered after the run announced it (it died before its commit): nothing more.
    expect(await runPublication(h.deps, id, control())).toBe("skipped");
    expect(mine()).toEqual([settled]);
    // Redelivered after a run that died between its final write and its announcement.
    await redis().hdel(publicationKeys.state(id), "announced");
    expect(await runPublication(h.deps, id, control())).toBe("skipped");
    expect(mine()).toEqual([settled, settled]);
  });

  it("announces nothing for a run that only waits", async () => {
    const { graph } = scriptedGraph({});
    const h = harness(graph);
    const id = await newPublication(h, { publish_at: new Date(h.clock.now + 3_600_000).toISOString() });
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    expect(announced.filter((a) => a.value.publication_id === id)).toEqual([]);
  });
});

describe("runPublication", () => {
  const cases: FlowCase[] = [
    {
      name: "FINISHED after polling → published once, every poll recorded",
      script: {
        create: [created()],
        read: [status("IN_PROGRESS"), status("IN_PROGRESS"), status("FINISHED", "Finished: Media has been uploaded.")],
        publish: [{ id: POST }],
      },
      outcome: "published",
      expect: (p, calls, h) => {
        expect(p.status).toBe("PUBLISHED");
        expect(p.container_id).toBe(CONTAINER);
        expect(p.post_id).toBe(POST);
        expect(p.permalink).toBe(`https://sandbox.test/reel/${POST}`);
        expect(p.last_status_code).toBe("FINISHED");
        expect(p.error).toBeNull();
        expect(p.polls.map((x) => [x.attempt, x.status_code])).toEqual([
          [1, "IN_PROGRESS"],
          [2, "IN_PROGRESS"],
          [3, "FINISHED"],
        ]);
        expect(p.polls[2].status).toBe("Finished: Media has been uploaded.");
        expect(p.polls.every((x) => !Number.isNaN(Date.parse(x.at)))).toBe(true);
        expect(stepNames(p)).toEqual(["queued", "creating", "created", "publishing", "published"]);
        expect(calls).toMatchObject({ create: 1, read: 3, publish: 1 });
        expect(h.sleeps).toEqual([50, 50, 50]);
        // Every entry carries its event's seq: steps and polls interleave by it.
        expect(p.steps.map((x) => x.seq)).toEqual([1, 2, 3, 7, 8]);
        expect(p.polls.map((x) => x.seq)).toEqual([4, 5, 6]);
      },
    },
    {
      name: "a creation answer without an id → FAILED, Graph's whole answer kept",
      script: { create: [created(null, { success: true, note: "no id here" })] },
      outcome: "failed",
      expect: (p, calls) => {
        expect(p.status).toBe("FAILED");
        expect(p.container_id).toBeNull();
        expect(p.error).toMatchObject({
          code: null,
          classification: "stop",
          fbtrace_id: "TRACE-C",
          response: { success: true, note: "no id here" },
        });
        expect(calls).toMatchObject({ create: 1, read: 0, publish: 0 });
      },
    },
    {
      name: "an access token echoed in Graph's answer never reaches the publication",
      script: {
        create: [
          created(null, { paging: { next: `https://graph.test/v21.0/x/media?access_token=${ACCOUNT.accessToken}` } }),
        ],
      },
      outcome: "failed",
      expect: (p) => {
        expect(JSON.stringify(p)).not.toContain(ACCOUNT.accessToken);
        expect(p.error?.response).toEqual({
          paging: { next: "https://graph.test/v21.0/x/media?access_token=[redacted]" },
        });
      },
    },
    {
      name: "ERROR 2207026 → FAILED, fix-input, no publish call",
      script: {
        create: [created()],
        read: [status("IN_PROGRESS"), status("ERROR", "Error: unsupported video format (2207026)")],
      },
      outcome: "failed",
      expect: (p, calls) => {
        expect(p.status).toBe("FAILED");
        expect(p.last_status_code).toBe("ERROR");
        expect(p.error).toMatchObject({
          code: 352,
          subcode: 2207026,
          message: "Error: unsupported video format (2207026)",
          fbtrace_id: "TRACE-S",
          classification: "fix-input",
        });
        expect(p.error?.advice).toMatch(/video/);
        expect(p.error).toMatchObject({
          headline: "The video's format is not supported for reels.",
          remedy: p.error?.advice,
        });
        expect(calls.publish).toBe(0);
      },
    },
    {
      name: "ERROR whose status says what the probe found → that finding is the headline",
      script: {
        create: [created()],
        read: [
          status(
            "ERROR",
            "Error: unsupported video format: the video is 1.5 s long; reels must be 3 s to 15 min (2207026)",
          ),
        ],
      },
      outcome: "failed",
      expect: (p) => {
        expect(p.error).toMatchObject({
          code: 352,
          subcode: 2207026,
          headline: "The video is 1.5 s long; reels must be 3 s to 15 min.",
          remedy: "The video does not meet the reel specification; fix the video.",
        });
      },
    },
    {
      name: "ERROR in Meta's words ('error code N'), with the sandbox's finding after it → the code from the table, the finding as headline",
      script: {
        create: [created()],
        read: [
          status(
            "ERROR",
            "Error: Media upload has failed with error code 2207026 (unsupported video format: the video is 1.5 s long; reels must be 3 s to 15 min)",
          ),
        ],
      },
      outcome: "failed",
      expect: (p) => {
        expect(p.error).toMatchObject({
          code: 352,
          subcode: 2207026,
          headline: "The video is 1.5 s long; reels must be 3 s to 15 min.",
        });
      },
    },
    {
      name: "ERROR exactly as Meta words it → the code and headline from the table",
      script: {
        create: [created()],
        read: [status("ERROR", "Error: Media upload has failed with error code 2207052")],
      },
      outcome: "failed",
      expect: (p) => {
        expect(p.error).toMatchObject({
          code: 9004,
          subcode: 2207052,
          headline: "Instagram could not fetch the video from its URL.",
        });
      },
    },
    {
      name: "EXPIRED → FAILED, new-container",
      script: { create: [created()], read: [status("EXPIRED")] },
      outcome: "failed",
      expect: (p, calls) => {
        expect(p.error).toMatchObject({ code: -2, subcode: 2207020, classification: "new-container" });
        expect(calls.publish).toBe(0);
      },
    },
    {
      name: "the first round's polls used up → watched, PROCESSING, never a blind publish nor TIMED_OUT",
      script: { create: [created()], read: times(5, status("IN_PROGRESS")) },
      outcome: "deferred",
      expect: (p, calls) => {
        expect(p.status).toBe("PROCESSING");
        expect(p.polls).toHaveLength(5);
        expect(p.error).toBeNull();
        expect(calls.publish).toBe(0);
        expect(stepNames(p).at(-1)).toBe("watching");
      },
    },
    {
      name: "transient errors at every step are retried with exponential backoff",
      script: {
        create: [graphError(2, undefined, "Service temporarily unavailable"), graphError(-1, 2207032), created()],
        read: [
          new GraphTransportError("GET /179 failed: ECONNRESET", null, true),
          status("FINISHED"),
          status("FINISHED"),
        ],
        publish: [graphError(24, 2207008, "temporary publish error"), { id: POST }],
      },
      outcome: "published",
      expect: (p, calls, h) => {
        expect(p.status).toBe("PUBLISHED");
        expect(calls).toMatchObject({ create: 3, read: 3, publish: 2 });
        // create: 100, 200; poll wait 50; read retry 100; publish retry 100 then the check before publishing again
        expect(h.sleeps).toEqual([100, 200, 50, 100, 100]);
        expect(stepNames(p).filter((s) => s === "retrying")).toHaveLength(4);
        expect(stepNames(p).filter((s) => s === "publishing")).toHaveLength(2);
      },
    },
    {
      name: "transient errors past the bound → FAILED with the last error",
      script: { create: times(4, graphError(1, undefined, "An unknown error occurred")) },
      outcome: "failed",
      expect: (p, calls, h) => {
        expect(calls.create).toBe(4);
        expect(h.sleeps).toEqual([100, 200, 400]);
        expect(p.error).toMatchObject({ code: 1, classification: "retry" });
      },
    },
    {
      name: "a publish refused as not ready (9007/2207027) goes back to polling",
      script: {
        create: [created()],
        read: [status("FINISHED"), status("FINISHED")],
        publish: [graphError(9007, 2207027, "Media ID is not available"), { id: POST }],
      },
      outcome: "published",
      expect: (p, calls) => {
        expect(calls.publish).toBe(2);
        expect(stepNames(p)).toContain("not_ready");
      },
    },
    {
      name: "a publish that went through although Graph answered 500 is found, not repeated",
      script: {
        create: [created()],
        read: [status("FINISHED"), status("PUBLISHED")],
        publish: [
          new GraphTransportError("POST /x/media_publish answered HTTP 500 without a Graph error object", 500, true),
        ],
      },
      outcome: "published",
      expect: (p, calls) => {
        expect(calls.publish).toBe(1);
        expect(p.status).toBe("PUBLISHED");
        expect(p.post_id).toBeNull(); // no media with this caption in the script: success, post unknown
        expect(p.steps.at(-1)?.detail).toMatch(/already published/);
      },
    },
    {
      name: "the publishing limit at publish (9/2207042) → SCHEDULED for the quota window, not FAILED",
      script: {
        create: [created()],
        read: [status("FINISHED")],
        publish: [graphError(9, 2207042, "Application request limit reached")],
      },
      outcome: "deferred",
      expect: (p) => {
        expect(p).toMatchObject({
          status: "SCHEDULED",
          scheduled_reason: "quota",
          error: null,
          container_id: CONTAINER,
        });
        expect(Date.parse(p.publish_at ?? "")).toBeGreaterThan(Date.now());
      },
    },
    {
      name: "a spam or abuse restriction at publish (4/2207051) → FAILED at once, stop, in plain words; not a rate-limit wait",
      script: {
        create: [created()],
        read: [status("FINISHED")],
        publish: [
          new GraphError({
            code: 4,
            subcode: 2207051,
            message: "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
            fbtraceId: "TRACE-E",
          }),
        ],
      },
      outcome: "failed",
      expect: (p, calls, h) => {
        expect(p).toMatchObject({ status: "FAILED", scheduled_reason: null });
        expect(p.error).toMatchObject({
          code: 4,
          subcode: 2207051,
          classification: "stop",
          headline: "Instagram restricted the account's publishing as suspected spam or abuse.",
        });
        expect(p.error?.remedy).toMatch(/^Not a rate limit: do not try again/);
        expect(calls.publish).toBe(1);
        expect(h.sleeps.filter((ms) => ms >= 100)).toEqual([]);
      },
    },
    {
      name: "a call the pacer held back (usage at its limit) → SCHEDULED rate_limited until Graph said, nothing sent",
      script: { create: [new GraphPaused(Date.parse("2030-01-01T00:07:00Z"), "account")] },
      outcome: "deferred",
      expect: (p, calls) => {
        expect(p).toMatchObject({ status: "SCHEDULED", scheduled_reason: "rate_limited", error: null });
        const at = Date.parse(p.publish_at ?? "");
        expect(at).toBeGreaterThanOrEqual(Date.parse("2030-01-01T00:07:00Z"));
        expect(at).toBeLessThanOrEqual(Date.parse("2030-01-01T00:07:06Z"));
        expect(p.steps.at(-1)?.detail).toMatch(/usage headers put the account's calls at the limit/);
        expect(calls.create).toBe(1);
      },
    },
  ];

  it.each(cases)("$name", async ({ script, outcome, expect: check }) => {
    const { graph, calls } = scriptedGraph(script);
    const h = harness(graph);
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe(outcome);
    check(await read(id), calls, h);
    expect(await redis().exists(publicationKeys.lease(id))).toBe(0);
  });

  it("190 at creation: the account needs reconnecting with Graph's error, and the publication waits for it, not retried", async () => {
    const { graph, calls } = scriptedGraph({ create: [graphError(190, 460, "Error validating access token")] });
    const h = harness(graph);
    const id = await newPublication(h, { account_id: REFUSED.accountId });
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    const account = await connected().find(TENANT, REFUSED.accountId);
    expect(account?.status).toBe("needs_reconnect");
    expect(account?.error).toMatchObject({
      code: 190,
      subcode: 460,
      message: "Error validating access token",
      fbtrace_id: "TRACE-E",
      classification: "reconnect-account",
    });
    expect(account?.error).toMatchObject({
      headline: "The account's access token is invalid, expired or revoked.",
      remedy: "The access token is invalid, expired or revoked; reconnect the account.",
    });
    expect(await read(id)).toMatchObject({
      status: "SCHEDULED",
      scheduled_reason: "needs_reconnect",
      publish_at: null,
      error: null,
    });
    expect(announced.filter((a) => a.value.publication_id === id).map((a) => a.value)).toEqual([
      {
        publication_id: id,
        tenant_id: TENANT,
        kind: "needs_reconnect",
        status: "SCHEDULED",
        account_id: REFUSED.accountId,
      },
    ]);
    expect(calls.create).toBe(1);
    expect(h.sleeps).toEqual([]);
  });

  it("an upload refused for its token waits for a reconnect, then the bytes go again with the new token; a retriable one is sent again", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "run-publication-upload-"));
    try {
      const uploadId = randomUUID();
      await mkdir(path.join(dataDir, "uploads", TENANT), { recursive: true });
      await writeFile(path.join(dataDir, "uploads", TENANT, `${uploadId}.mp4`), Buffer.alloc(64));
      await recordUpload(
        redis(),
        {
          upload_id: uploadId,
          tenant_id: TENANT,
          size: 64,
          mime: "video/mp4",
          file: `${TENANT}/${uploadId}.mp4`,
          created_at: new Date().toISOString(),
        },
        1e9,
      );
      const uri = `https://rupload.test/ig-api-upload/v21.0/${CONTAINER}`;
      const { graph, calls } = scriptedGraph({
        create: [{ ...created(), uri }],
        read: [status("FINISHED")],
        publish: [{ id: POST }],
      });
      const uploads: (GraphUploadError | undefined)[] = [
        new GraphUploadError("Invalid OAuth access token.", "OAuthException", false, 401),
        new GraphUploadError("Service temporarily unavailable", "ServiceUnavailableError", true, 503),
        undefined,
      ];
      const tokens: string[] = [];
      graph.uploadVideo = async (account, to, video) => {
        tokens.push(account.accessToken);
        expect([to, video.size]).toEqual([uri, 64]);
        const next = uploads.shift();
        if (next) throw next;
      };
      const h = harness(graph, { dataDir });
      const id = await newPublication(h, { account_id: UPLOADER.accountId, upload_id: uploadId });

      expect(await runPublication(h.deps, id, control())).toBe("deferred");
      expect(await read(id)).toMatchObject({
        status: "SCHEDULED",
        scheduled_reason: "needs_reconnect",
        container_id: CONTAINER,
      });
      const account = await connected().find(TENANT, UPLOADER.accountId);
      expect(account).toMatchObject({
        status: "needs_reconnect",
        error: {
          classification: "reconnect-account",
          message: "The upload failed: OAuthException: Invalid OAuth access token.",
        },
      });

      await connected().connect({ tenantId: TENANT, accountId: UPLOADER.accountId, accessToken: "TOKEN-uploader-new" });
      await releaseWaitingPublications(redis(), UPLOADER.accountId, h.clock.now);
      expect(await runPublication(h.deps, id, control())).toBe("published");
      const p = await read(id);
      expect(p).toMatchObject({ status: "PUBLISHED", container_id: CONTAINER, post_id: POST });
      expect(tokens).toEqual(["TOKEN-uploader", "TOKEN-uploader-new", "TOKEN-uploader-new"]);
      expect(calls.create).toBe(1); // the container made before the refusal takes the bytes
      expect(stepNames(p).filter((s) => s === "retrying")).toHaveLength(1);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("an upload goes by the signed address when the account is connected with Instagram Login at run time, not at submit; a worker that takes over after the create polls, never uploads", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "run-publication-by-url-"));
    try {
      const uploadId = randomUUID();
      await mkdir(path.join(dataDir, "uploads", TENANT), { recursive: true });
      await writeFile(path.join(dataDir, "uploads", TENANT, `${uploadId}.mp4`), Buffer.alloc(64));
      const upload = { upload_id: uploadId, tenant_id: TENANT, size: 64, mime: "video/mp4" as const };
      await recordUpload(redis(), { ...upload, file: `${TENANT}/${uploadId}.mp4`, created_at: "2030-01-01" }, 1e9);
      const accountId = "17841400000000077";
      const connectAs = (login: "facebook" | "instagram") =>
        connected().connect({ tenantId: TENANT, accountId, accessToken: `TOKEN-${login}`, login, graphUrl: null });
      await connectAs("facebook");
      const shutdown = new AbortController();
      const inputs: CreateContainerInput[] = [];
      const { graph, calls } = scriptedGraph({
        read: [
          () => {
            shutdown.abort(); // stopped while polling
            return status("IN_PROGRESS");
          },
          status("FINISHED"),
        ],
        publish: [{ id: POST }],
      });
      graph.createContainer = async (_account, input) => {
        inputs.push(input);
        return created();
      };
      const uploadUrls = createUploadUrls(
        {
          PUBLIC_URL: "https://dispatch.test",
          GRAPH_URL: "https://graph.test",
          GRAPH_SANDBOX: false,
          DATA_DIR: dataDir,
          INSTAGRAM_LOGIN: {
            app: undefined,
            dialogUrl: "",
            tokenUrl: "",
            redirectUri: "",
            graphUrl: "https://ig.test",
          },
          FACEBOOK_LOGIN: { app: undefined, dialogUrl: "", redirectUri: "", graphUrl: "https://fb.test" },
        },
        randomBytes(32),
        redis(),
      );
      const first = harness(graph, { dataDir, uploadUrls });
      const id = await newPublication(first, { account_id: accountId, upload_id: uploadId });
      await connectAs("instagram");

      expect(await runPublication(first.deps, id, control(shutdown.signal))).toBe("handed-back");
      expect(inputs).toHaveLength(1);
      expect(inputs[0]?.resumable).toBeUndefined();
      expect(inputs[0]?.videoUrl).toMatch(
        new RegExp(
          `^https://dispatch\\.test/media/uploads/${uploadId}\\.mp4\\?publication=${id}&expires=\\d+&signature=`,
        ),
      );
      const second = harness(graph, { workerId: "another-worker", dataDir, uploadUrls });
      expect(await runPublication(second.deps, id, control())).toBe("published");
      expect(calls).toMatchObject({ read: 2, publish: 1 });
      expect(inputs).toHaveLength(1);
      expect(stepNames(await read(id))).toEqual([
        "queued",
        "creating",
        "created",
        "picked_up",
        "publishing",
        "published",
      ]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("a rate limit makes the publication wait with a jittered, doubling backoff (or Graph's estimate), then it goes on", async () => {
    const limited = (regainAccessMs = 0) =>
      Object.assign(graphError(4, undefined, "(#4) Application request limit reached"), {
        usage: { percent: 100, regainAccessMs },
      });
    const { graph, calls } = scriptedGraph({
      create: [limited(), limited(), limited(600_000), created()],
      read: [status("FINISHED")],
      publish: [{ id: "POST-RL" }],
    });
    const h = harness(graph, { rateLimit: { baseMs: 10_000, maxMs: 100_000 } });
    const id = await newPublication(h);
    const waits: number[] = [];
    for (const ceiling of [10_000, 20_000]) {
      expect(await runPublication(h.deps, id, control())).toBe("deferred");
      const p = await read(id);
      expect(p).toMatchObject({ status: "SCHEDULED", scheduled_reason: "rate_limited", error: null });
      const delay = Date.parse(p.publish_at ?? "") - h.clock.now;
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
      waits.push(delay);
      expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(Date.parse(p.publish_at ?? "")));
      h.clock.now += delay;
    }
    // Graph's estimate (10 min) outweighs the backoff (up to 40 s).
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    const estimated = await read(id);
    expect(Date.parse(estimated.publish_at ?? "") - h.clock.now).toBe(600_000);
    h.clock.now += 600_000;
    expect(await runPublication(h.deps, id, control())).toBe("published");
    const p = await read(id);
    expect(p).toMatchObject({ status: "PUBLISHED", scheduled_reason: null, post_id: "POST-RL" });
    expect(stepNames(p).filter((s) => s === "waiting")).toHaveLength(3);
    expect(stepNames(p).filter((s) => s === "due")).toHaveLength(3);
    expect(calls.create).toBe(4);
    expect(h.sleeps.filter((ms) => ms >= 10_000)).toEqual([]); // waited on the schedule, not in the worker
  });

  it("a slow container is watched once per watch interval, with no worker held, and published once it settles", async () => {
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [...times(5, status("IN_PROGRESS")), status("IN_PROGRESS"), status("FINISHED")],
      publish: [{ id: POST }],
    });
    const h = harness(graph, { watchIntervalMs: 60_000 });
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    const lastPoll = h.clock.now;
    // Held by the scheduler for the next read, not by a worker: no sleep of the interval, no active run.
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(lastPoll + 60_000));
    expect(await redis().hget(publicationKeys.state(id), "active_run")).toBe("");
    expect(h.sleeps.filter((ms) => ms >= 60_000)).toEqual([]);
    let p = await read(id);
    expect(p.status).toBe("PROCESSING");
    expect(p.steps.at(-1)?.detail).toMatch(
      /^Still IN_PROGRESS after 5 polls 50 ms apart; reading it once every 60 s until it settles or its 24 h life ends at /,
    );

    // A message that comes early (a repeat) reads nothing and defers to the same time.
    h.clock.now += 30_000;
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    expect(calls.read).toBe(5);
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(lastPoll + 60_000));

    h.clock.now = lastPoll + 60_000;
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    expect(calls.read).toBe(6);
    h.clock.now += 60_000;
    expect(await runPublication(h.deps, id, control())).toBe("published");
    p = await read(id);
    expect(p.status).toBe("PUBLISHED");
    const times_ = p.polls.map((x) => Date.parse(x.at));
    expect(times_.slice(5).map((t, i) => t - times_[4 + i])).toEqual([60_000, 60_000]);
    expect(stepNames(p)).toEqual(["queued", "creating", "created", "watching", "publishing", "published"]);
    expect(calls).toMatchObject({ create: 1, read: 7, publish: 1 });
  });

  it("TIMED_OUT only when the container never settled in its 24 h life", async () => {
    const { graph, calls } = scriptedGraph({ create: [created()], read: times(6, status("IN_PROGRESS")) });
    const h = harness(graph, { watchIntervalMs: 60_000 });
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    const createdAt = Date.parse((await read(id)).steps.find((s) => s.step === "created")!.at);
    h.clock.now = createdAt + 24 * 3600_000 - 30_000;
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    // Its next read would come after the container's end: the scheduler brings it back at the end instead.
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(createdAt + 24 * 3600_000));
    h.clock.now = createdAt + 24 * 3600_000;
    expect(await runPublication(h.deps, id, control())).toBe("timed-out");
    const p = await read(id);
    expect(p.status).toBe("TIMED_OUT");
    expect(p.steps.at(-1)?.detail).toMatch(/still not FINISHED when its 24 h life ended/);
    expect(calls).toMatchObject({ read: 6, publish: 0 });
    // Resuming it would only read an expired container.
    await expect(
      resumePublication({ redis: redis(), producer: fakeProducer, now: () => h.clock.now }, TENANT, id),
    ).rejects.toMatchObject({ code: "conflict" });
    expect(await runPublication(h.deps, id, control())).toBe("skipped");
  });

  it("Graph failing on every read while the container is watched: read again a watch interval later, not TIMED_OUT", async () => {
    const flaky = () => new GraphTransportError("GET /179 failed: ECONNRESET", null, true);
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [status("IN_PROGRESS"), ...times(4, flaky()), status("FINISHED")],
      publish: [{ id: POST }],
    });
    const h = harness(graph, { watchIntervalMs: 60_000 });
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    const p = await read(id);
    expect(p.status).toBe("PROCESSING");
    expect(p.steps.at(-1)).toMatchObject({
      step: "read_failed",
      detail: expect.stringMatching(
        /^Graph kept failing while the container was read \(GET \/179 failed: ECONNRESET\); reading it again at /,
      ),
    });
    h.clock.now += 60_000;
    expect(await runPublication(h.deps, id, control())).toBe("published");
    expect(calls.read).toBe(6);
  });

  it("a TIMED_OUT publication whose container lives (recorded by an earlier version) is resumed with a fresh budget and published", async () => {
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [...times(5, status("IN_PROGRESS")), status("IN_PROGRESS"), status("FINISHED")],
      publish: [{ id: POST }],
    });
    const h = harness(graph);
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    await appendEvent(redis(), id, {
      status: "TIMED_OUT",
      body: {
        kind: "step",
        step: { at: new Date(h.clock.now).toISOString(), step: "timed_out", detail: "as an earlier version did" },
      },
      fields: { active_run: "" },
    });
    expect(await runPublication(h.deps, id, control())).toBe("skipped"); // a repeat message does not poll on its own

    sentMessages.length = 0;
    const resumed = await resumePublication(
      { redis: redis(), producer: fakeProducer, now: () => h.clock.now },
      TENANT,
      id,
    );
    expect(resumed?.status).toBe("PROCESSING");
    // The work alone: the TIMED_OUT it leaves was announced (by the redelivery that found it) and marked so.
    expect(sentMessages).toHaveLength(1);
    expect(sentMessages[0].key).toBe(ACCOUNT.accountId);
    expect(JSON.parse(sentMessages[0].value)).toEqual({
      publication_id: id,
      tenant_id: TENANT,
      account_id: ACCOUNT.accountId,
    });
    await expect(
      resumePublication({ redis: redis(), producer: fakeProducer, now: () => h.clock.now }, TENANT, id),
    ).rejects.toMatchObject({ code: "conflict" });

    // The resume's fresh round reads at once, at the poll interval, not a watch interval later.
    expect(await runPublication(h.deps, id, control())).toBe("published");
    const p = await read(id);
    expect(p.status).toBe("PUBLISHED");
    expect(p.polls.map((x) => x.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(stepNames(p)).toEqual([
      "queued",
      "creating",
      "created",
      "watching",
      "timed_out",
      "resumed",
      "publishing",
      "published",
    ]);
    expect(calls).toMatchObject({ create: 1, publish: 1 });
  });

  it("a worker stopped right after Graph published: the redelivery finds the post and does not publish again", async () => {
    const caption = `crash ${randomUUID()}`;
    const shutdown = new AbortController();
    let container = "FINISHED";
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [() => status(container), () => status(container)],
      publish: [
        () => {
          // Graph published, then the worker went away before it read the answer.
          container = "PUBLISHED";
          shutdown.abort();
          throw new Error("socket hang up");
        },
      ],
      media: [
        { id: "17800000000000001", caption: "someone else's", timestamp: "2030-01-01T00:00:01+0000" },
        { id: POST, caption, timestamp: "2030-01-01T00:00:01+0000", permalink: "https://sandbox.test/reel/abc" },
      ],
    });
    const first = harness(graph);
    const id = await newPublication(first, { caption });
    expect(await runPublication(first.deps, id, control(shutdown.signal))).toBe("handed-back");
    expect((await read(id)).status).toBe("PUBLISHING");

    const second = harness(graph, { workerId: "another-worker" });
    expect(await runPublication(second.deps, id, control())).toBe("published");
    const p = await read(id);
    expect(calls.publish).toBe(1);
    expect(calls.create).toBe(1);
    expect(p.post_id).toBe(POST);
    expect(p.permalink).toBe("https://sandbox.test/reel/abc");
    expect(stepNames(p)).toEqual(["queued", "creating", "created", "publishing", "picked_up", "published"]);
    expect(p.polls.at(-1)?.status_code).toBe("PUBLISHED");
  });

  it("a worker stopped before publishing: the redelivery reads the container first, then publishes once", async () => {
    const shutdown = new AbortController();
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [
        () => {
          shutdown.abort(); // stopped while polling
          return status("IN_PROGRESS");
        },
        status("FINISHED"),
      ],
      publish: [{ id: POST }],
    });
    const first = harness(graph);
    const id = await newPublication(first);
    expect(await runPublication(first.deps, id, control(shutdown.signal))).toBe("handed-back");
    const second = harness(graph, { workerId: "another-worker" });
    expect(await runPublication(second.deps, id, control())).toBe("published");
    expect(calls).toMatchObject({ create: 1, publish: 1 });
    expect((await read(id)).container_id).toBe(CONTAINER);
  });

  it("waits for a lease held by a worker that died, then resumes with the existing container", async () => {
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [status("FINISHED")],
      publish: [{ id: POST }],
    });
    const h = harness(graph, { leaseMs: 300, sleep: undefined, now: undefined });
    const id = await newPublication(h);
    await redis().hset(publicationKeys.state(id), {
      status: "PROCESSING",
      container_id: CONTAINER,
      container_created_at: new Date().toISOString(),
      active_run: "dead-worker",
    });
    await redis().set(publicationKeys.lease(id), "dead-worker", "PX", 300);
    const started = Date.now();
    expect(await runPublication(h.deps, id, control())).toBe("published");
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(calls.create).toBe(0);
    expect(stepNames(await read(id))).toContain("picked_up");
  });

  it("defers a scheduled publication that is not due, without waiting, and runs it once due", async () => {
    const { graph } = scriptedGraph({ create: [created()], read: [status("FINISHED")], publish: [{ id: POST }] });
    const h = harness(graph);
    const publishAt = new Date(h.clock.now + 3600_000).toISOString();
    const id = await newPublication(h, { publish_at: publishAt });
    expect((await read(id)).status).toBe("SCHEDULED");
    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    expect(h.sleeps).toEqual([]);
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(Date.parse(publishAt)));

    h.clock.now += 3600_000;
    expect(await runPublication(h.deps, id, control())).toBe("published");
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBeNull();
    expect(stepNames(await read(id))).toEqual(["scheduled", "due", "creating", "created", "publishing", "published"]);
  });

  it("shows a scheduled publication whose submitter died before the reveal when a worker first defers it, not once due", async () => {
    const { graph } = scriptedGraph({});
    const h = harness(graph);
    const publishAt = new Date(h.clock.now + 86_400_000).toISOString();
    const id = await newPublication(h, { publish_at: publishAt });
    // As the submitter leaves it when it dies between the broker's ack and the reveal.
    await redis()
      .multi()
      .hset(publicationKeys.state(id), "submitting", "1")
      .zrem(publicationKeys.tenantIndex(TENANT), id)
      .zrem(publicationKeys.scheduled, id)
      .exec();
    expect(await readPublication(redis(), TENANT, id)).toBeUndefined();

    expect(await runPublication(h.deps, id, control())).toBe("deferred");
    expect((await read(id)).status).toBe("SCHEDULED");
    expect(await redis().zscore(publicationKeys.tenantIndex(TENANT), id)).not.toBeNull();
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(Date.parse(publishAt)));
  });

  it("skips a publication cancelled while QUEUED, without a Graph call", async () => {
    const { graph, calls } = scriptedGraph({});
    const h = harness(graph);
    const id = await newPublication(h);
    const cancelled = await cancelPublication({ redis: redis(), now: () => h.clock.now }, TENANT, id);
    expect(cancelled.status).toBe("CANCELLED");
    expect(await runPublication(h.deps, id, control())).toBe("skipped");
    expect(calls).toMatchObject({ create: 0, read: 0, publish: 0 });
    expect(stepNames(await read(id))).toEqual(["queued", "cancelled"]);
  });

  /** Its usage marker: the updated_at of the final write added to the tenant's usage, "" before any. */
  const usageCounted = async (id: string) => (await redis().hget(publicationKeys.state(id), "usage_counted")) ?? "";

  it("counts a cancelled SCHEDULED publication in the cancel's own MULTI: a web process dying right after the write loses nothing", async () => {
    const h = harness(scriptedGraph({}).graph);
    const id = await newPublication(h, { publish_at: new Date(h.clock.now + 3_600_000).toISOString() });
    // The command after the write fails, as if the process died there.
    const dying = new Proxy(redis(), {
      get(target, prop, receiver) {
        if (prop === "zrem") return async () => Promise.reject(new Error("the web process died"));
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await expect(cancelPublication({ redis: dying, now: () => h.clock.now }, TENANT, id)).rejects.toThrow("died");
    const p = await read(id);
    expect(p.status).toBe("CANCELLED");
    expect(await usageCounted(id)).toBe(new Date(h.clock.now).toISOString());
  });

  it("counts a FAILED run in its final write's MULTI: a client retrying it at once does not leave the failure uncounted", async () => {
    const { graph } = scriptedGraph({ create: [graphError(4, 2207051, "We restrict certain activity")] });
    const id = await newPublication(harness(graph));
    // The client's retry lands the moment the final write is made, before the run does anything else.
    let retried = false;
    const retrying = new Proxy(redis(), {
      get(target, prop, receiver) {
        if (prop !== "multi") {
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (...args: Parameters<typeof target.multi>) => {
          const multi = target.multi(...args);
          const exec = multi.exec.bind(multi);
          multi.exec = async () => {
            const results = await exec();
            if (!retried && (await target.hget(publicationKeys.state(id), "status")) === "FAILED") {
              retried = true;
              await retryPublication({ redis: target, producer: fakeProducer }, TENANT, id);
            }
            return results;
          };
          return multi;
        };
      },
    });
    const h = harness(graph, { redis: retrying });
    expect(await runPublication(h.deps, id, control())).toBe("failed");
    expect(retried).toBe(true);
    expect((await read(id)).status).toBe("QUEUED");
    const failedAt = (await read(id)).steps.find((s) => s.step === "failed")?.at;
    expect(await usageCounted(id)).toBe(failedAt);
  });

  it("a retry the broker did not take puts the FAILED back as the same arrival: its redelivery counts and announces nothing new", async () => {
    const { graph } = scriptedGraph({ create: [graphError(4, 2207051, "We restrict certain activity")] });
    const h = harness(graph);
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("failed");
    const failed = await read(id);
    // The announcement goes out; the work message does not (the broker went away in between).
    const unreachable = async () =>
      ({
        send: async ({ topic }: { topic: string }) =>
          topic === TOPICS.reels.name ? Promise.reject(new Error("broker down")) : [],
      }) as unknown as Producer;
    h.clock.now += 60_000;
    await expect(
      retryPublication({ redis: redis(), producer: unreachable, now: () => h.clock.now }, TENANT, id),
    ).rejects.toThrow(/unreachable/);
    const undone = await read(id);
    expect([undone.status, undone.updated_at, await usageCounted(id)]).toEqual([
      "FAILED",
      failed.updated_at,
      failed.updated_at,
    ]);
    // The run's message read again, as if its announcement had failed too (not marked announced):
    // the same arrival, counted already, announced under its own time.
    await redis().hdel(publicationKeys.state(id), "announced");
    const before = announced.filter((a) => a.value.publication_id === id).map((a) => a.value.publication);
    expect(await runPublication(h.deps, id, control())).toBe("skipped");
    const after = announced.filter((a) => a.value.publication_id === id).map((a) => a.value.publication);
    expect(after.map((p) => (p as PublicationView).updated_at)).toEqual(
      [...before, before[0]].map((p) => (p as PublicationView).updated_at),
    );
    expect(await recordReelUsage(redis(), (await readPublicationRecord(redis(), id))!)).toBe(false);
  });

  it("a retry of an outcome its run announced sends the work alone", async () => {
    const { graph } = scriptedGraph({ create: [graphError(4, 2207051, "We restrict certain activity")] });
    const h = harness(graph);
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("failed");
    sentMessages.length = 0;
    await retryPublication({ redis: redis(), producer: fakeProducer, now: () => h.clock.now }, TENANT, id);
    expect(sentMessages.map((m) => JSON.parse(m.value))).toEqual([
      { publication_id: id, tenant_id: TENANT, account_id: ACCOUNT.accountId },
    ]);
  });

  it("with USAGE_AGGREGATES off, counts neither a cancel nor a settled run", async () => {
    const { graph } = scriptedGraph({ create: [created()], read: [status("FINISHED")], publish: [{ id: POST }] });
    const h = harness(graph, { recordUsage: false });
    const scheduled = await newPublication(h, { publish_at: new Date(h.clock.now + 3_600_000).toISOString() });
    await cancelPublication({ redis: redis(), now: () => h.clock.now, recordUsage: false }, TENANT, scheduled);
    const published = await newPublication(h);
    expect(await runPublication(h.deps, published, control())).toBe("published");
    expect(await runPublication(h.deps, published, control())).toBe("skipped");
    expect([(await read(scheduled)).status, await usageCounted(scheduled), await usageCounted(published)]).toEqual([
      "CANCELLED",
      "",
      "",
    ]);
  });

  /** The worker's Redis, with `between` run once right after the run read the record and before its first event. */
  const interleaved = (between: () => Promise<unknown>) => {
    let done = false;
    return new Proxy(redis(), {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== "hset" || typeof value !== "function")
          return typeof value === "function" ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          const result = await value.apply(target, args);
          if (!done && args[1] === "active_run") {
            done = true;
            await between();
          }
          return result;
        };
      },
    });
  };

  it("a cancel that lands between the worker's read and its first write wins: nothing more is written, Graph is not called", async () => {
    const { graph, calls } = scriptedGraph({});
    const h = harness(graph);
    const id = await newPublication(h);
    let answer: PublicationView | undefined;
    const deps = {
      ...h.deps,
      redis: interleaved(async () => (answer = await cancelPublication({ redis: redis() }, TENANT, id))),
    };
    expect(await runPublication(deps, id, control())).toBe("skipped");
    expect(answer?.status).toBe("CANCELLED");
    expect(calls).toMatchObject({ create: 0, read: 0, publish: 0 });
    const p = await read(id);
    expect([p.status, stepNames(p)]).toEqual(["CANCELLED", ["queued", "cancelled"]]);
  });

  it("refuses to cancel once the container is being created, and to change a publication that is not SCHEDULED", async () => {
    const h = harness(
      scriptedGraph({ create: [created()], read: [status("FINISHED")], publish: [{ id: POST }] }).graph,
    );
    const id = await newPublication(h);
    expect(await runPublication(h.deps, id, control())).toBe("published");
    await expect(cancelPublication({ redis: redis() }, TENANT, id)).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining("PUBLISHED"),
    });
    await expect(updatePublication({ redis: redis() }, TENANT, id, { caption: "new" })).rejects.toMatchObject({
      status: 409,
    });
    await expect(cancelPublication({ redis: redis() }, "globex", id)).rejects.toMatchObject({ status: 404 });
  });

  it("a reschedule that lands between the worker's read of a due publication and its move to QUEUED wins: the run defers to the new time", async () => {
    const { graph, calls } = scriptedGraph({
      create: [created()],
      read: [status("FINISHED")],
      publish: [{ id: POST }],
    });
    const h = harness(graph);
    const id = await newPublication(h, {
      publish_at: new Date(h.clock.now + 60_000).toISOString(),
      caption: "old caption",
    });
    h.clock.now += 60_000;
    const later = new Date(h.clock.now + 3600_000);
    const reschedule = () =>
      updatePublication({ redis: redis(), now: () => new Date(h.clock.now) }, TENANT, id, {
        publish_at: later.toISOString(),
        caption: "new caption",
      });
    expect(await runPublication({ ...h.deps, redis: interleaved(reschedule) }, id, control())).toBe("deferred");
    expect(calls.create).toBe(0);
    const p = await read(id);
    expect([p.status, p.publish_at, p.caption, stepNames(p)]).toEqual([
      "SCHEDULED",
      later.toISOString(),
      "new caption",
      ["scheduled", "updated"],
    ]);
    expect(await redis().zscore(publicationKeys.scheduled, id)).toBe(String(later.getTime()));

    h.clock.now = later.getTime();
    expect(await runPublication(h.deps, id, control())).toBe("published");
    expect(stepNames(await read(id))).toEqual([
      "scheduled",
      "updated",
      "due",
      "creating",
      "created",
      "publishing",
      "published",
    ]);
  });

  it("skips a message for a publication that was never recorded", async () => {
    const { graph, calls } = scriptedGraph({});
    expect(await runPublication(harness(graph).deps, randomUUID(), control())).toBe("skipped");
    expect(calls.create).toBe(0);
  });
});
