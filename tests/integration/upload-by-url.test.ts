import { createHash, randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import path from "node:path";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig, type Config } from "@/lib/config";
import { ApiError, toProblem } from "@/lib/errors";
import { createKafka, createProducer } from "@/lib/kafka";
import { createRedis, type Redis } from "@/lib/redis";
import { loadAccountsKey } from "@/lib/accounts/token-cipher";
import { ConnectedAccounts, type AccountLogin } from "@/lib/accounts/connected-accounts";
import { createGraphHosts } from "@/lib/graph/hosts";
import type { PublicationView } from "@/lib/reels/publication";
import { startPublicationConsumer } from "@/lib/reels/publication-consumer";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { runPublication } from "@/lib/reels/run-publication";
import { submitPublication } from "@/lib/reels/submit-publication";
import { createUploadUrls } from "@/lib/reels/upload-for-graph";
import { handleGraphRequest, settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { createSandboxAccount, setProcessingMs } from "@/lib/graph/sandbox/sandbox-accounts";
import { issueToken } from "@/lib/graph/sandbox/sandbox-tokens";
import { signUploadUrl, uploadUrlKey } from "@/lib/uploads/signed-upload-url";
import { readUpload } from "@/lib/uploads/upload-store";
import { PEER_HEADER } from "@/lib/web/request-guard";
import type { RunningConsumer } from "@/lib/worker/worker-context";
import { inProcessWorker, ROOT, waitFor } from "../helpers";
import { closeServers, listen, origin } from "../sandbox-server";

/**
 * Local files for accounts connected with Instagram Login (issue 40, item 3), as the embedded
 * setup runs them: one origin serves the built-in Graph sandbox under /graph and the signed upload
 * addresses under /media, and PUBLIC_URL is left at its default, this machine (loopback). The
 * sandbox fetches the file from Dispatch's own address through its ordinary connection policy (no
 * ALLOW_PRIVATE_URLS). Real Redis and broker, the worker's publication consumer in this process.
 */

const DATA_DIR = path.join(ROOT, ".test-data/upload-by-url");
const VIDEO = path.join(ROOT, "public/samples/reel-valid.mp4");
const TENANT = "byurl";
const KEY = "byurl-uploads-key-0123456789abcdef";

interface Seen {
  method: string;
  path: string;
  params: Record<string, string>;
  status: number;
  range?: string;
}

let redis: Redis;
let server: Server;
let sandbox: SandboxDeps;
let config: Config;
let producer: Producer;
let worker: RunningConsumer;
const graphCalls: Seen[] = [];
const mediaRequests: Seen[] = [];
const accounts = {} as Record<"instagram" | "facebook" | "slow", { id: string; token: string }>;
let routes: {
  uploads: typeof import("@/app/api/uploads/route");
  reels: typeof import("@/app/api/reels/route");
  reel: typeof import("@/app/api/reels/[id]/route");
  media: typeof import("@/app/media/uploads/[file]/route");
};

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  server = await listen((req, res) => void serve(req, res).catch((error: Error) => res.destroy(error)));
  const port = new URL(origin(server)).port;
  const env = {
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: inject("kafkaBrokers"),
    KAFKA_EMBEDDED: "true",
    API_KEYS: `${TENANT}:${KEY}`,
    // The embedded setup: this server is Dispatch at PORT, GRAPH_URL its own sandbox, PUBLIC_URL its default.
    PORT: port,
    GRAPH_URL: `http://127.0.0.1:${port}/graph`,
    REEL_POLL_INTERVAL_MS: "50",
    REEL_POLL_ATTEMPTS: "1200",
    SANDBOX_PROCESSING_MS: "200",
    DATA_DIR,
  };
  Object.assign(process.env, env);
  config = parseConfig(env);
  expect(config.GRAPH_SANDBOX).toBe(true);
  expect(config.PUBLIC_URL).toBe(`http://127.0.0.1:${port}`);
  expect(config.ALLOW_PRIVATE_URLS).toBe(false);
  sandbox = { redis, config, log: () => {}, now: () => Date.now() };
  routes = {
    uploads: await import("@/app/api/uploads/route"),
    reels: await import("@/app/api/reels/route"),
    reel: await import("@/app/api/reels/[id]/route"),
    media: await import("@/app/media/uploads/[file]/route"),
  };
  const { getServices } = await import("@/lib/web/services");
  for (const [name, login] of [
    ["instagram", "instagram"],
    ["facebook", "facebook"],
    ["slow", "instagram"],
  ] as const) {
    const { account_id } = await createSandboxAccount(sandbox, { username: `byurl_${name}` });
    const token = await issueToken(sandbox, account_id, { login });
    accounts[name] = { id: account_id, token };
    await connect(getServices().accounts, account_id, token, login);
  }
  producer = createProducer(createKafka(config.KAFKA_BROKERS, "upload-by-url-test"));
  await producer.connect();
  const workerId = `upload-by-url-${randomUUID().slice(0, 8)}`;
  worker = await startPublicationConsumer(inProcessWorker({ config, redis, producer, log: () => {} }, workerId));
});

afterAll(async () => {
  await worker?.stop(0).catch(() => {});
  await settleSandboxProcessing(sandbox);
  await producer?.disconnect().catch(() => {});
  const { getServices } = await import("@/lib/web/services");
  const services = getServices();
  await (await services.producer()).disconnect().catch(() => {});
  services.redis.disconnect();
  await closeServers(server);
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
});

/** As a Meta login stores it: the token, the login, and the login's Graph host. */
function connect(connected: ConnectedAccounts, accountId: string, accessToken: string, login: AccountLogin) {
  const graphUrl = login === "facebook" ? config.FACEBOOK_LOGIN.graphUrl : config.INSTAGRAM_LOGIN.graphUrl;
  return connected.connect({ tenantId: TENANT, accountId, accessToken, login, graphUrl });
}

/** Dispatch's origin: /graph is the sandbox (peer stamped as the request guard does), /media the signed addresses. */
async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const url = new URL(req.url ?? "/", origin(server));
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  headers.set(PEER_HEADER, req.socket.remoteAddress ?? "");
  const method = req.method ?? "GET";
  const request = new Request(url, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body });
  const file = url.pathname.startsWith("/media/uploads/") ? url.pathname.slice("/media/uploads/".length) : undefined;
  const response = file
    ? await routes.media[method === "HEAD" ? "HEAD" : "GET"](request, { params: Promise.resolve({ file }) })
    : await handleGraphRequest(request, sandbox);
  const isForm = (headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded");
  const seen: Seen = {
    method,
    path: url.pathname,
    params: {
      ...Object.fromEntries(url.searchParams),
      ...(isForm ? Object.fromEntries(new URLSearchParams(body.toString())) : {}),
    },
    status: response.status,
    range: headers.get("range") ?? undefined,
  };
  (file ? mediaRequests : graphCalls).push(seen);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const auth = { authorization: `Bearer ${KEY}` };

async function uploadVideo(): Promise<string> {
  const response = await routes.uploads.POST(
    new Request(`${config.PUBLIC_URL}/api/uploads`, {
      method: "POST",
      headers: { ...auth, "content-type": "video/mp4" },
      body: readFileSync(VIDEO),
    }),
    undefined,
  );
  expect(response.status).toBe(201);
  return ((await response.json()) as { upload_id: string }).upload_id;
}

async function submit(accountId: string, uploadId: string): Promise<string> {
  const response = await routes.reels.POST(
    new Request(`${config.PUBLIC_URL}/api/reels`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ account_id: accountId, upload_id: uploadId, caption: `by url ${randomUUID()}` }),
    }),
    undefined,
  );
  expect(response.status).toBe(202);
  return ((await response.json()) as { publication_id: string }).publication_id;
}

async function readReel(id: string): Promise<PublicationView> {
  const response = await routes.reel.GET(new Request(`${config.PUBLIC_URL}/api/reels/${id}`, { headers: auth }), {
    params: Promise.resolve({ id }),
  });
  return (await response.json()) as PublicationView;
}

function settled(id: string): Promise<PublicationView> {
  return waitFor(
    async () => {
      const view = await readReel(id);
      return ["PUBLISHED", "FAILED", "TIMED_OUT"].includes(view.status) ? view : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `publication ${id} to settle` },
  );
}

const createsOf = (accountId: string) =>
  graphCalls.filter((c) => c.method === "POST" && c.path.endsWith(`/${config.GRAPH_VERSION}/${accountId}/media`));
const ruploadsOf = (containerId: string) =>
  graphCalls.filter((c) => c.path.endsWith(`/ig-api-upload/${config.GRAPH_VERSION}/${containerId}`));

describe("an uploaded file for an account connected with Instagram Login", () => {
  it("publishes from a signed address under PUBLIC_URL that the sandbox fetches, with no resumable upload", async () => {
    const uploadId = await uploadVideo();
    const id = await submit(accounts.instagram.id, uploadId);
    const p = await settled(id);
    expect(p.status).toBe("PUBLISHED");
    expect(p.steps.map((s) => s.step)).toEqual(["queued", "creating", "created", "publishing", "published"]);
    const creating = p.steps.find((s) => s.step === "creating")!.detail;
    expect(creating).toMatch(/signed address under PUBLIC_URL valid until \d{4}-\d\d-\d\dT/);
    // The address is Graph's to fetch, not the timeline's: its signature is nowhere in what a tenant reads.
    expect(JSON.stringify(p)).not.toMatch(/signature=/);

    const creates = createsOf(accounts.instagram.id).filter((c) => c.params.caption === p.caption);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.params.upload_type).toBeUndefined();
    const videoUrl = new URL(creates[0]!.params.video_url!);
    expect(`${videoUrl.origin}${videoUrl.pathname}`).toBe(`${config.PUBLIC_URL}/media/uploads/${uploadId}.mp4`);
    expect(videoUrl.searchParams.get("publication")).toBe(id);
    expect(ruploadsOf(p.container_id!)).toEqual([]);
    const fetched = mediaRequests.filter((r) => r.path === videoUrl.pathname);
    expect(fetched.length).toBeGreaterThanOrEqual(1);
    expect(fetched.every((r) => r.status === 200 || r.status === 206)).toBe(true);

    // What Graph published is the uploaded file itself.
    const media = (await (
      await fetch(
        `${config.GRAPH_URL}/${config.GRAPH_VERSION}/${p.post_id}?fields=media_url&access_token=${accounts.instagram.token}`,
      )
    ).json()) as { media_url: string };
    expect(sha256(Buffer.from(await (await fetch(media.media_url)).arrayBuffer()))).toBe(sha256(readFileSync(VIDEO)));
    // Published: the address serves nothing any more, whoever holds it.
    expect((await fetch(videoUrl)).status).toBe(404);
  });

  it("is refused a resumable container by the sandbox, as Meta documents rupload for Facebook Login only", async () => {
    const create = (token: string, accountId: string) =>
      fetch(`${config.GRAPH_URL}/${config.GRAPH_VERSION}/${accountId}/media`, {
        method: "POST",
        body: new URLSearchParams({ media_type: "REELS", upload_type: "resumable", access_token: token }),
      });
    const refused = await create(accounts.instagram.token, accounts.instagram.id);
    expect(refused.status).toBe(400);
    const { error } = (await refused.json()) as { error: { code: number; message: string } };
    expect(error.code).toBe(100);
    expect(error.message).toMatch(/upload_type=resumable/);
    const facebook = await create(accounts.facebook.token, accounts.facebook.id);
    expect(facebook.status).toBe(200);
    expect(await facebook.json()).toMatchObject({
      id: expect.any(String),
      uri: expect.stringContaining("/ig-api-upload/"),
    });
  });

  it("serves the address with Range while Graph may fetch it, and refuses a wrong or cut signature, an expired address and another file", async () => {
    // Its containers take long enough to look at the address while the publication is PROCESSING.
    await setProcessingMs(sandbox, accounts.slow.id, 10_000);
    const uploadId = await uploadVideo();
    const other = await uploadVideo();
    const id = await submit(accounts.slow.id, uploadId);
    await waitFor(async () => (await readReel(id)).status === "PROCESSING", {
      timeoutMs: 60_000,
      what: "the container to be created",
    });
    const [create] = createsOf(accounts.slow.id);
    const address = new URL(create!.params.video_url!);
    const size = statSync(VIDEO).size;
    const bytes = readFileSync(VIDEO);

    const ranged = await fetch(address, { headers: { range: "bytes=100-1099" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 100-1099/${size}`);
    expect(ranged.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(100, 1100))).toBe(true);
    const head = await fetch(address, { method: "HEAD" });
    expect([head.status, head.headers.get("content-length"), head.headers.get("accept-ranges")]).toEqual([
      200,
      String(size),
      "bytes",
    ]);

    const signature = address.searchParams.get("signature")!;
    const changed = (name: string, value: string) => {
      const url = new URL(address);
      url.searchParams.set(name, value);
      return url;
    };
    const refusals = {
      wrong: changed("signature", `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`),
      cut: changed("signature", signature.slice(0, 20)),
      none: (() => {
        const url = new URL(address);
        url.searchParams.delete("signature");
        return url;
      })(),
      // Signed with the right key for this very upload and publication, but its end has passed.
      expired: new URL(
        signUploadUrl(uploadUrlKey(loadAccountsKey(config)), config.PUBLIC_URL, {
          uploadId,
          publicationId: id,
          extension: "mp4",
          expiresAtS: Math.floor(Date.now() / 1000) - 1,
        }),
      ),
      otherFile: new URL(`${config.PUBLIC_URL}/media/uploads/${other}.mp4${address.search}`),
      otherPublication: changed("publication", randomUUID()),
    };
    for (const [what, url] of Object.entries(refusals)) {
      const response = await fetch(url);
      expect([what, response.status]).toEqual([what, 403]);
      expect(await response.text()).toBe("");
    }

    expect((await settled(id)).status).toBe("PUBLISHED");
    expect((await fetch(address)).status).toBe(404);
  });
});

describe("an uploaded file for an account connected with Facebook Login", () => {
  it("still goes to Graph by a resumable upload, with no address under PUBLIC_URL", async () => {
    const uploadId = await uploadVideo();
    const before = mediaRequests.length;
    const p = await settled(await submit(accounts.facebook.id, uploadId));
    expect(p.status).toBe("PUBLISHED");
    expect(p.steps.map((s) => s.step)).toEqual([
      "queued",
      "creating",
      "created",
      "uploading",
      "uploaded",
      "publishing",
      "published",
    ]);
    const creates = createsOf(accounts.facebook.id).filter((c) => c.params.caption === p.caption);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.params).toMatchObject({ upload_type: "resumable" });
    expect(creates[0]!.params.video_url).toBeUndefined();
    expect(ruploadsOf(p.container_id!)).toHaveLength(1);
    expect(mediaRequests.slice(before)).toEqual([]);
  });
});

describe("with the real Graph API and a PUBLIC_URL Meta cannot reach", () => {
  const realConfig = () => parseConfig({ ...process.env, GRAPH_URL: "https://graph.instagram.com", REEL_ACCOUNTS: "" });

  it("refuses an Instagram Login account's upload at submit, as a 422 naming PUBLIC_URL, keeping the upload unclaimed", async () => {
    const real = realConfig();
    expect([real.GRAPH_SANDBOX, real.PUBLIC_URL]).toEqual([false, config.PUBLIC_URL]);
    const { getServices } = await import("@/lib/web/services");
    const services = getServices();
    const deps = {
      redis,
      producer: services.producer,
      connected: services.accounts,
      uploadUrls: createUploadUrls(real, loadAccountsKey(real), redis),
    };
    const uploadId = await uploadVideo();
    const input = publicationInputSchema.parse({ account_id: accounts.instagram.id, upload_id: uploadId });
    const refused = await submitPublication(deps, TENANT, input).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    const { problem } = toProblem(refused);
    expect(problem).toMatchObject({ status: 422, type: "/problems/validation" });
    expect(problem.errors).toEqual([
      {
        path: "upload_id",
        message: expect.stringMatching(/^PUBLIC_URL \(http:\/\/127\.0\.0\.1:\d+\) is not a public address/),
      },
    ]);
    expect(await readUpload(redis, uploadId)).toMatchObject({ publication_id: "" });
    // A Facebook Login account's upload goes resumably: PUBLIC_URL does not matter to it.
    const facebook = publicationInputSchema.parse({ account_id: accounts.facebook.id, upload_id: uploadId });
    expect((await submitPublication(deps, TENANT, facebook)).created).toBe(true);
  });

  it("fails an Instagram Login account's accepted upload in the run, before any Graph call, when the worker's PUBLIC_URL cannot be reached", async () => {
    const real = realConfig();
    const { getServices } = await import("@/lib/web/services");
    const services = getServices();
    const uploadId = await uploadVideo();
    // Accepted while PUBLIC_URL would do (as before a configuration change), onto a log no worker reads.
    const sent: unknown[] = [];
    const log = { send: async (batch: unknown) => void sent.push(batch) } as unknown as Producer;
    const input = publicationInputSchema.parse({ account_id: accounts.instagram.id, upload_id: uploadId });
    const { publication } = await submitPublication(
      { redis, producer: async () => log, connected: services.accounts },
      TENANT,
      input,
    );
    expect(sent).toHaveLength(1);
    const calls: string[] = [];
    const key = loadAccountsKey(real);
    const outcome = await runPublication(
      {
        redis,
        producer,
        graphs: createGraphHosts({
          graphUrl: real.GRAPH_URL,
          otherHosts: [real.INSTAGRAM_LOGIN.graphUrl, real.FACEBOOK_LOGIN.graphUrl, config.INSTAGRAM_LOGIN.graphUrl],
          version: real.GRAPH_VERSION,
          fetch: async (input) => {
            calls.push(String(input));
            throw new Error("no Graph call was expected");
          },
        }),
        connected: new ConnectedAccounts(redis, key, []),
        uploadUrls: createUploadUrls(real, key, redis),
        log: () => {},
        workerId: "upload-by-url-real",
        pollIntervalMs: 50,
        pollAttempts: 10,
        dataDir: real.DATA_DIR,
      },
      publication.publication_id,
      { heartbeat: async () => {}, shutdown: new AbortController().signal, runId: randomUUID() },
    );
    expect(outcome).toBe("failed");
    expect(calls).toEqual([]);
    const p = await readReel(publication.publication_id);
    expect(p.status).toBe("FAILED");
    expect(p.error).toMatchObject({
      code: null,
      classification: "fix-input",
      message: expect.stringContaining("PUBLIC_URL"),
    });
    expect(p.container_id).toBeNull();
  });
});
