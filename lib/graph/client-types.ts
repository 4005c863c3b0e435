import type { GraphPacer } from "./pacing";
import type { ReelParameters } from "./reel-parameters";
import type { InsightValues } from "./insights-metrics";

/** The Graph client's types, apart from it so its calls (container-calls.ts, request.ts) and the client share them without a circle. */

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
