import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { GraphTransportError } from "./graph-error";
import type { GraphPacer } from "./graph-pacing";
import { countedCall, type GraphCall } from "./graph-request";

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
  /** Reads every answer's usage headers and spaces or holds calls as they near the limit (graph-pacing.ts); none: calls go out as made. */
  pacer?: GraphPacer;
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
  createContainer(
    account: GraphAccount,
    input: CreateContainerInput,
    signal?: AbortSignal,
  ): Promise<CreateContainerAnswer>;
  readContainer(account: GraphAccount, containerId: string, signal?: AbortSignal): Promise<ContainerStatus>;
  /** Sends a resumable container's bytes to its upload `uri` (Graph's rupload), from offset 0. */
  uploadVideo(
    account: GraphAccount,
    uri: string,
    video: { path: string; size: number },
    signal?: AbortSignal,
  ): Promise<void>;
  publishContainer(account: GraphAccount, containerId: string, signal?: AbortSignal): Promise<{ id: string }>;
  readMedia(account: GraphAccount, mediaId: string, fields?: string, signal?: AbortSignal): Promise<MediaItem>;
  /** The account itself (`GET /{ig-user-id}`), e.g. its username. */
  readAccount(account: GraphAccount, fields?: string, signal?: AbortSignal): Promise<GraphUser>;
  listMedia(account: GraphAccount, fields?: string, limit?: number, signal?: AbortSignal): Promise<MediaItem[]>;
  /** `GET /{ig-user-id}/content_publishing_limit`: posts published in the moving window (or since `since`, seconds, no older than 24 h), and the limit. */
  readPublishingLimit(account: GraphAccount, signal?: AbortSignal, since?: number): Promise<PublishingLimit>;
}

export interface PublishingLimit {
  quota_usage: number;
  quota_total: number | null;
  /** Seconds (Graph: 86400). */
  quota_duration: number | null;
}

export function createGraphClient(options: GraphClientOptions): GraphClient {
  const call = countedCall(options);
  return {
    async createContainer(account, input, signal) {
      const { body, fbtraceId } = await call({
        method: "POST",
        path: `${account.accountId}/media`,
        params: containerParams(input),
        account,
        signal,
      });
      const uri = isRecord(body) && typeof body.uri === "string" ? body.uri : null;
      return { id: idOf(body), uri, answer: body, fbtraceId };
    },

    async uploadVideo(account, uri, video, signal) {
      const url = new URL(uri);
      const headers = {
        authorization: `OAuth ${account.accessToken}`,
        offset: "0",
        file_size: String(video.size),
        "content-type": "application/octet-stream",
      };
      const body = () => Readable.toWeb(createReadStream(video.path)) as ReadableStream<Uint8Array>;
      const { body: answer } = await call({
        method: "POST",
        path: url.pathname.replace(/^\/+/, ""),
        params: {},
        account,
        signal,
        upload: { url, headers, body },
      });
      if (!isRecord(answer) || answer.success !== true)
        throw new GraphTransportError(`POST ${url.pathname} answered without success`, 200, true);
    },

    async readContainer(account, containerId, signal) {
      const { body, fbtraceId } = await call({
        method: "GET",
        path: containerId,
        params: { fields: "status_code,status" },
        account,
        signal,
      });
      const record = isRecord(body) ? body : {};
      return {
        id: idOf(body),
        statusCode: typeof record.status_code === "string" ? record.status_code : null,
        status: typeof record.status === "string" ? record.status : null,
        fbtraceId,
      };
    },

    async publishContainer(account, containerId, signal) {
      const { body, fbtraceId } = await call({
        method: "POST",
        path: `${account.accountId}/media_publish`,
        params: { creation_id: containerId },
        account,
        signal,
      });
      const id = idOf(body);
      // Whether Graph published is unknown here; the flow reads the container before anything else.
      if (!id)
        throw new GraphTransportError(
          `POST /${account.accountId}/media_publish answered without an id`,
          200,
          true,
          fbtraceId,
        );
      return { id };
    },

    readMedia: (account, mediaId, fields = "id,permalink,timestamp", signal) =>
      readNode(call, account, mediaId, fields, signal),

    readAccount: (account, fields = "id,username", signal) =>
      readNode(call, account, account.accountId, fields, signal),

    async readPublishingLimit(account, signal, since) {
      const params: Record<string, string> = {
        fields: "quota_usage,config",
        ...(since === undefined ? {} : { since: String(Math.floor(since)) }),
      };
      const { body } = await call({
        method: "GET",
        path: `${account.accountId}/content_publishing_limit`,
        params,
        account,
        signal,
      });
      return publishingLimitOf(body, account.accountId);
    },

    async listMedia(account, fields = "id,caption,timestamp,permalink", limit = 25, signal) {
      const { body } = await call({
        method: "GET",
        path: `${account.accountId}/media`,
        params: { fields, limit: String(limit) },
        account,
        signal,
      });
      const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
      return data.filter((item): item is MediaItem => isRecord(item) && typeof item.id === "string");
    },
  };
}

/** One node by id with the requested fields; an answer without an id is not Graph's. */
async function readNode(
  call: GraphCall,
  account: GraphAccount,
  nodeId: string,
  fields: string,
  signal?: AbortSignal,
): Promise<{ id: string; [field: string]: unknown }> {
  const { body } = await call({ method: "GET", path: nodeId, params: { fields }, account, signal });
  const id = idOf(body);
  if (!id || !isRecord(body)) throw new GraphTransportError(`GET /${nodeId} answered without an id`, 200, false);
  return { ...body, id };
}

function containerParams(input: CreateContainerInput): Record<string, string> {
  const params: Record<string, string> = { media_type: "REELS", share_to_feed: String(input.shareToFeed) };
  if (input.resumable) params.upload_type = "resumable";
  if (input.videoUrl) params.video_url = input.videoUrl;
  if (input.caption) params.caption = input.caption;
  return params;
}

function publishingLimitOf(body: unknown, accountId: string): PublishingLimit {
  const entry = isRecord(body) && Array.isArray(body.data) && isRecord(body.data[0]) ? body.data[0] : undefined;
  const config = entry && isRecord(entry.config) ? entry.config : {};
  if (!entry || typeof entry.quota_usage !== "number")
    throw new GraphTransportError(
      `GET /${accountId}/content_publishing_limit answered without quota_usage`,
      200,
      false,
    );
  const numberOrNull = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null);
  return {
    quota_usage: entry.quota_usage,
    quota_total: numberOrNull(config.quota_total),
    quota_duration: numberOrNull(config.quota_duration),
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
