import { GraphTransportError } from "./error";
import type { GraphPacer } from "./pacing";
import { isRecord, idOf } from "./answer";
import { createContainer, publishContainer, readContainer, uploadVideo } from "./container-calls";
import { countedCall, type GraphCall } from "./request";
import type { ReelParameters } from "./reel-parameters";
import type { InsightValues } from "./insights-metrics";
import { parseInsightsAnswer } from "./parse-insights";

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
  /** Reads every answer's usage headers and spaces or holds calls as they near the limit (pacing.ts); none: calls go out as made. */
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
  /** cover_url, thumb_offset, audio_name, collaborators, location_id, user_tags, trial_params. */
  reel?: ReelParameters;
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
  /** `GET /{ig-media-id}/insights?metric=…`: the values by metric, or null while Graph has none yet (an empty `data`). */
  readMediaInsights(
    account: GraphAccount,
    mediaId: string,
    metrics: readonly string[],
    signal?: AbortSignal,
  ): Promise<InsightValues | null>;
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
    createContainer: (account, input, signal) => createContainer(call, account, input, signal),
    uploadVideo: (account, uri, video, signal) => uploadVideo(call, account, uri, video, signal),
    readContainer: (account, containerId, signal) => readContainer(call, account, containerId, signal),
    publishContainer: (account, containerId, signal) => publishContainer(call, account, containerId, signal),
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

    async readMediaInsights(account, mediaId, metrics, signal) {
      const params = { metric: metrics.join(","), period: "lifetime" };
      const { body } = await call({ method: "GET", path: `${mediaId}/insights`, params, account, signal });
      return parseInsightsAnswer(body, mediaId);
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
