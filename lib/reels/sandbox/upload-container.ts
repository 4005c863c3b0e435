import { mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import { readWithin } from "../../read-within";
import { GraphError } from "../graph-error";
import { limitsOf, type SandboxDeps } from "./deps";
import { formatBytes } from "../../net/fetch-video";
import { authorize, graphErrorResponse, graphJson, invalidParameter, requireValidToken, unsupportedRequest, type GraphCall } from "./graph-request";
import { takeFault } from "./sandbox-accounts";
import { newAttemptOwner, startProcessing } from "./process-container";
import { awaitingUpload, readContainerRecord, startUploadedContainer, videoPath } from "./store";
import { accountVideoPath } from "./video-store";
import { removeFile } from "../../remove-file";

/**
 * Graph's resumable upload (rupload.facebook.com/ig-api-upload/{version}/{container-id}), here at
 * {base}/ig-api-upload/{version}/{container-id}: `Authorization: OAuth <token>`, `offset`,
 * `file_size` and the bytes as the body, or a `file_url` header instead of bytes. An upload that
 * stops short keeps its bytes; the client goes on from `offset` = what arrived. When all
 * `file_size` bytes are in, the container processes them exactly as it processes fetched ones.
 */

export const UPLOAD_SUCCESS = { success: true, message: "Upload successful." } as const;

/** The upload address handed out with a resumable container. */
export function containerUploadUri(call: Pick<GraphCall, "baseUrl" | "version">, containerId: string): string {
  return `${call.baseUrl}/ig-api-upload/${call.version}/${containerId}`;
}

/** The received bytes of a container, while the upload is under way (relative to videosDir). */
function uploadFile(accountId: string, containerId: string): string {
  // "00" is never an attempt owner, so the file sweep removes an abandoned upload after its grace period.
  return accountVideoPath(accountId, `${containerId}-00.part`);
}

export async function receiveContainerUpload(deps: SandboxDeps, request: Request, version: string, containerId: string): Promise<Response> {
  try {
    const container = await readContainerRecord(deps.redis, containerId);
    if (!container) throw unsupportedRequest("POST", containerId);
    const call: GraphCall = { deps, request, method: "POST", params: {}, baseUrl: "", version };
    await requireValidToken(call);
    authorize(call, container.account_id);
    const fault = await takeFault(deps, container.account_id, "upload");
    if (fault) throw fault;
    if (container.upload_type !== "resumable") throw invalidParameter("The container was not created with upload_type=resumable");
    // Everything arrived already (a retry after a lost answer): the same answer again.
    if (!awaitingUpload(container)) {
      // The rest is not wanted; a cancel that fails means the stream is closed already.
      await request.body?.cancel().catch(() => {});
      return graphJson(UPLOAD_SUCCESS);
    }

    const fileUrl = request.headers.get("file_url");
    if (fileUrl) {
      if (!/^https?:\/\//i.test(fileUrl)) throw invalidParameter("The file_url header must be an http or https URL");
      await begin(deps, containerId, { video_url: fileUrl });
      return graphJson(UPLOAD_SUCCESS);
    }

    const fileSize = headerInteger(request, "file_size");
    const offset = headerInteger(request, "offset");
    const maxBytes = limitsOf(deps).maxVideoBytes;
    if (fileSize < 1) throw invalidParameter("The file_size header must be the video's size in bytes");
    if (fileSize > maxBytes) throw invalidParameter(`The file is ${formatBytes(fileSize)}; the largest video accepted is ${formatBytes(maxBytes)}`);
    const file = uploadFile(container.account_id, containerId);
    const full = videoPath(deps, file);
    await mkdir(path.dirname(full), { recursive: true });
    const received = (await stat(full).catch(() => undefined))?.size ?? 0;
    if (offset !== received && offset !== 0) throw invalidParameter(`The offset header is ${offset}, but ${received} bytes were received; resume at offset ${received}`);
    if (!request.body) throw invalidParameter("The request has no body: send the video's bytes, or a file_url header");

    await appendBody(full, request.body, offset, fileSize);
    const total = (await stat(full)).size;
    if (total < fileSize) throw invalidParameter(`The upload stopped at byte ${total} of ${fileSize}; resume with offset ${total}`);
    await begin(deps, containerId, { upload_file: file });
    deps.log("info", "sandbox container upload received", { container_id: containerId, account_id: container.account_id, bytes: fileSize });
    return graphJson(UPLOAD_SUCCESS);
  } catch (error) {
    if (error instanceof GraphError) return graphErrorResponse(error);
    throw error;
  }
}

/** Writes the body at `offset` of the file; a body longer than the rest removes what arrived, a broken connection keeps it. */
async function appendBody(full: string, body: ReadableStream<Uint8Array>, offset: number, fileSize: number): Promise<void> {
  const tooLong = () => invalidParameter(`The body is longer than file_size (${fileSize}) minus offset (${offset})`);
  const writing = await open(full, offset === 0 ? "w" : "a");
  try {
    await readWithin(body, fileSize - offset, tooLong, (chunk) => writing.write(chunk));
  } catch (error) {
    if (error instanceof GraphError) {
      await writing.close();
      await removeFile(full);
      throw error;
    }
    // The connection broke: what arrived is kept, and the client resumes at its size.
  } finally {
    // Closed already when the upload was refused above; a second close fails and changes nothing.
    await writing.close().catch(() => {});
  }
}

async function begin(deps: SandboxDeps, containerId: string, fields: { upload_file?: string; video_url?: string }): Promise<void> {
  const owner = newAttemptOwner();
  if (await startUploadedContainer(deps.redis, containerId, owner, deps.now(), fields)) startProcessing(deps, containerId, owner);
}

function headerInteger(request: Request, name: string): number {
  const value = request.headers.get(name);
  if (value === null || !/^\d{1,15}$/.test(value.trim())) throw invalidParameter(`The ${name} header is required: a whole number of bytes`);
  return Number(value.trim());
}
