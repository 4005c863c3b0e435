import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { isRecord, idOf } from "./answer";
import type { ContainerStatus, CreateContainerAnswer, CreateContainerInput, GraphAccount } from "./client-types";
import { GraphTransportError } from "./error";
import type { GraphCall } from "./request";
import { reelGraphParams } from "./reel-parameters";

/** The container flow's calls (create, upload, read, publish), each through the client's counted, paced call. */

export async function createContainer(
  call: GraphCall,
  account: GraphAccount,
  input: CreateContainerInput,
  signal?: AbortSignal,
): Promise<CreateContainerAnswer> {
  const { body, fbtraceId } = await call({
    method: "POST",
    path: `${account.accountId}/media`,
    params: containerParams(input),
    account,
    signal,
  });
  const uri = isRecord(body) && typeof body.uri === "string" ? body.uri : null;
  return { id: idOf(body), uri, answer: body, fbtraceId };
}

/** Sends a resumable container's bytes to its upload `uri` (Graph's rupload), from offset 0. */
export async function uploadVideo(
  call: GraphCall,
  account: GraphAccount,
  uri: string,
  video: { path: string; size: number },
  signal?: AbortSignal,
): Promise<void> {
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
}

export async function readContainer(
  call: GraphCall,
  account: GraphAccount,
  containerId: string,
  signal?: AbortSignal,
): Promise<ContainerStatus> {
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
}

export async function publishContainer(
  call: GraphCall,
  account: GraphAccount,
  containerId: string,
  signal?: AbortSignal,
): Promise<{ id: string }> {
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
}

function containerParams(input: CreateContainerInput): Record<string, string> {
  const params: Record<string, string> = { media_type: "REELS", share_to_feed: String(input.shareToFeed) };
  if (input.resumable) params.upload_type = "resumable";
  if (input.videoUrl) params.video_url = input.videoUrl;
  if (input.caption) params.caption = input.caption;
  for (const [name, value] of Object.entries(reelGraphParams(input.reel ?? {})))
    if (value !== undefined) params[name] = value;
  return params;
}
