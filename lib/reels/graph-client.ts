import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { recordGraphCall } from "../metrics";
import { GraphError, GraphTransportError } from "./graph-error";
import { readGraphUsage } from "./graph-usage";

/**
 * A thin client of the Graph content-publishing contract, the same against the real interface and
 * the sandbox: POST bodies are form-encoded with `access_token` as a body field, GETs carry it as a
 * query parameter. Tokens never appear in an error message: messages name the path, not the URL.
 */

export interface GraphClientOptions {
  /** GRAPH_URL, without the version segment. */
  graphUrl: string;
  version: string;
  fetch: typeof fetch;
  /** Per request; a slow Graph is a transient failure, not a hung worker. */
  timeoutMs?: number;
}

export interface GraphAccount {
  accountId: string;
  accessToken: string;
}

/** A video_url for Graph to fetch, or `resumable`: Graph answers an upload `uri` for the bytes (uploadVideo). */
export interface CreateContainerInput {
  videoUrl?: string;
  resumable?: boolean;
  caption?: string;
  shareToFeed: boolean;
}

/** The creation answer as Graph sent it: a container id normally, but the flow keeps the whole answer when there is none. */
export interface CreateContainerAnswer {
  id: string | null;
  /** Where a resumable container's bytes go; null otherwise. */
  uri: string | null;
  answer: unknown;
  fbtraceId: string | null;
}

/** IN_PROGRESS, FINISHED, ERROR, EXPIRED or PUBLISHED; null when the answer had none. */
export interface ContainerStatus {
  id: string | null;
  statusCode: string | null;
  status: string | null;
  fbtraceId: string | null;
}

export interface MediaItem {
  id: string;
  caption?: string;
  timestamp?: string;
  permalink?: string;
  [field: string]: unknown;
}

export interface GraphUser {
  id: string;
  username?: string;
  [field: string]: unknown;
}

export interface GraphClient {
  createContainer(account: GraphAccount, input: CreateContainerInput, signal?: AbortSignal): Promise<CreateContainerAnswer>;
  readContainer(containerId: string, accessToken: string, signal?: AbortSignal): Promise<ContainerStatus>;
  /** Sends a resumable container's bytes to its upload `uri` (Graph's rupload), from offset 0. */
  uploadVideo(account: GraphAccount, uri: string, video: { path: string; size: number }, signal?: AbortSignal): Promise<void>;
  publishContainer(account: GraphAccount, containerId: string, signal?: AbortSignal): Promise<{ id: string }>;
  readMedia(mediaId: string, accessToken: string, fields?: string, signal?: AbortSignal): Promise<MediaItem>;
  /** The account itself (`GET /{ig-user-id}`), e.g. its username. */
  readAccount(account: GraphAccount, fields?: string, signal?: AbortSignal): Promise<GraphUser>;
  listMedia(account: GraphAccount, fields?: string, limit?: number, signal?: AbortSignal): Promise<MediaItem[]>;
  /** `GET /{ig-user-id}/content_publishing_limit`: posts published in the moving window, and the limit. */
  readPublishingLimit(account: GraphAccount, signal?: AbortSignal): Promise<PublishingLimit>;
}

export interface PublishingLimit {
  quota_usage: number;
  quota_total: number | null;
  /** Seconds (Graph: 86400). */
  quota_duration: number | null;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** An upload of up to 300 MB on a slow line. */
const UPLOAD_TIMEOUT_MS = 30 * 60_000;

export function createGraphClient(options: GraphClientOptions): GraphClient {
  const base = `${options.graphUrl.replace(/\/+$/, "")}/${options.version}`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  // Every call counted by endpoint and outcome (dispatch_graph_calls_total).
  const call: typeof uncountedCall = (method, path, ...rest) =>
    uncountedCall(method, path, ...rest).then(
      (answer) => (recordGraphCall(method, path, "ok"), answer),
      (error: unknown) => {
        recordGraphCall(method, path, error instanceof GraphError ? String(error.code) : error instanceof GraphTransportError ? (error.status ? `http_${error.status}` : "network") : "aborted");
        throw error;
      },
    );

  async function uncountedCall(
    method: "GET" | "POST",
    path: string,
    params: Record<string, string>,
    accessToken: string,
    signal?: AbortSignal,
    upload?: { url: URL; headers: Record<string, string>; body: () => ReadableStream<Uint8Array> },
  ): Promise<{ body: unknown; fbtraceId: string | null }> {
    const url = upload?.url ?? new URL(`${base}/${path}`);
    const init: RequestInit & { duplex?: "half" } = { method, headers: { accept: "application/json" } };
    if (upload) {
      init.headers = { ...init.headers, ...upload.headers };
      init.body = upload.body();
      init.duplex = "half";
    } else if (method === "GET") {
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      url.searchParams.set("access_token", accessToken);
    } else {
      init.body = new URLSearchParams({ ...params, access_token: accessToken }).toString();
      init.headers = { ...init.headers, "content-type": "application/x-www-form-urlencoded" };
    }
    const timeout = AbortSignal.timeout(upload ? UPLOAD_TIMEOUT_MS : timeoutMs);
    init.signal = signal ? AbortSignal.any([signal, timeout]) : timeout;

    let response: Response;
    let text: string;
    try {
      response = await options.fetch(url, init);
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const reason = timeout.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
      throw new GraphTransportError(`${method} /${path} failed: ${reason}`, null, true);
    }

    const fbtraceId = response.headers.get("x-fb-trace-id");
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text, so a creation answer without an id can still be shown as it was
    }
    const graphError = GraphError.fromResponse(body, response.status, fbtraceId ?? undefined);
    if (graphError) {
      graphError.usage = readGraphUsage(response.headers);
      throw graphError;
    }
    if (!response.ok) {
      const transient = response.status >= 500 || response.status === 429;
      throw new GraphTransportError(`${method} /${path} answered HTTP ${response.status} without a Graph error object`, response.status, transient, fbtraceId);
    }
    return { body, fbtraceId };
  }

  /** One node by id with the requested fields; an answer without an id is not Graph's. */
  async function readNode(nodeId: string, accessToken: string, fields: string, signal?: AbortSignal): Promise<{ id: string; [field: string]: unknown }> {
    const { body } = await call("GET", nodeId, { fields }, accessToken, signal);
    const id = idOf(body);
    if (!id || !isRecord(body)) throw new GraphTransportError(`GET /${nodeId} answered without an id`, 200, false);
    return { ...body, id };
  }

  return {
    async createContainer(account, input, signal) {
      const params: Record<string, string> = { media_type: "REELS", share_to_feed: String(input.shareToFeed) };
      if (input.resumable) params.upload_type = "resumable";
      if (input.videoUrl) params.video_url = input.videoUrl;
      if (input.caption) params.caption = input.caption;
      const { body, fbtraceId } = await call("POST", `${account.accountId}/media`, params, account.accessToken, signal);
      const uri = isRecord(body) && typeof body.uri === "string" ? body.uri : null;
      return { id: idOf(body), uri, answer: body, fbtraceId };
    },

    async uploadVideo(account, uri, video, signal) {
      const url = new URL(uri);
      const headers = { authorization: `OAuth ${account.accessToken}`, offset: "0", file_size: String(video.size), "content-type": "application/octet-stream" };
      const body = () => Readable.toWeb(createReadStream(video.path)) as ReadableStream<Uint8Array>;
      const { body: answer } = await call("POST", url.pathname.replace(/^\/+/, ""), {}, account.accessToken, signal, { url, headers, body });
      if (!isRecord(answer) || answer.success !== true) throw new GraphTransportError(`POST ${url.pathname} answered without success`, 200, true);
    },

    async readContainer(containerId, accessToken, signal) {
      const { body, fbtraceId } = await call("GET", containerId, { fields: "status_code,status" }, accessToken, signal);
      const record = isRecord(body) ? body : {};
      return {
        id: idOf(body),
        statusCode: typeof record.status_code === "string" ? record.status_code : null,
        status: typeof record.status === "string" ? record.status : null,
        fbtraceId,
      };
    },

    async publishContainer(account, containerId, signal) {
      const { body, fbtraceId } = await call("POST", `${account.accountId}/media_publish`, { creation_id: containerId }, account.accessToken, signal);
      const id = idOf(body);
      // Whether Graph published is unknown here; the flow reads the container before anything else.
      if (!id) throw new GraphTransportError(`POST /${account.accountId}/media_publish answered without an id`, 200, true, fbtraceId);
      return { id };
    },

    readMedia: (mediaId, accessToken, fields = "id,permalink,timestamp", signal) => readNode(mediaId, accessToken, fields, signal),

    readAccount: (account, fields = "id,username", signal) => readNode(account.accountId, account.accessToken, fields, signal),

    async readPublishingLimit(account, signal) {
      const { body } = await call("GET", `${account.accountId}/content_publishing_limit`, { fields: "quota_usage,config" }, account.accessToken, signal);
      const entry = isRecord(body) && Array.isArray(body.data) && isRecord(body.data[0]) ? body.data[0] : undefined;
      const config = entry && isRecord(entry.config) ? entry.config : {};
      if (!entry || typeof entry.quota_usage !== "number") throw new GraphTransportError(`GET /${account.accountId}/content_publishing_limit answered without quota_usage`, 200, false);
      const numberOrNull = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null);
      return { quota_usage: entry.quota_usage, quota_total: numberOrNull(config.quota_total), quota_duration: numberOrNull(config.quota_duration) };
    },

    async listMedia(account, fields = "id,caption,timestamp,permalink", limit = 25, signal) {
      const { body } = await call("GET", `${account.accountId}/media`, { fields, limit: String(limit) }, account.accessToken, signal);
      const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
      return data.filter((item): item is MediaItem => isRecord(item) && typeof item.id === "string");
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Graph ids are strings; a number would lose digits past 2^53, so only strings (or safe integers) count. */
function idOf(body: unknown): string | null {
  if (!isRecord(body)) return null;
  if (typeof body.id === "string" && body.id.length > 0) return body.id;
  if (typeof body.id === "number" && Number.isSafeInteger(body.id)) return String(body.id);
  return null;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
