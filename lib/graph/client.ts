import { GraphTransportError } from "./error";
import { isRecord, idOf } from "./answer";
import { createContainer, publishContainer, readContainer, uploadVideo } from "./container-calls";
import { countedCall, type GraphCall } from "./request";
import { parseInsightsAnswer } from "./parse-insights";
import type { GraphClientOptions, GraphAccount, MediaItem, GraphClient, PublishingLimit } from "./client-types";

export type {
  GraphClientOptions,
  GraphAccount,
  CreateContainerInput,
  CreateContainerAnswer,
  ContainerStatus,
  MediaItem,
  GraphUser,
  GraphClient,
  PublishingLimit,
} from "./client-types";

/**
 * A thin client of the Graph content-publishing contract, the same against the real interface and
 * the sandbox: POST bodies are form-encoded with `access_token` as a body field, GETs carry it as a
 * query parameter. Tokens never appear in an error message: messages name the path, not the URL.
 */

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
