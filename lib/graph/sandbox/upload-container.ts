import { mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import { readWithin } from "../../read-within";
import { GraphError, isTransientGraphFailure } from "../error";
import { isRateLimitCode } from "../usage";
import { limitsOf, type SandboxDeps } from "./deps";
import { formatBytes } from "../../net/fetch-video";
import {
  authorize,
  graphJson,
  invalidParameter,
  requireValidToken,
  unsupportedRequest,
  type GraphCall,
} from "./graph-request";
import { takeFault } from "./sandbox-accounts";
import { newAttemptOwner, startProcessing } from "./process-container";
import { awaitingUpload, readContainerRecord, videoPath, type ContainerRecord } from "./store";
import { startUploadedContainer } from "./container-writes";
import { throttleFor, withUsageHeaders } from "./usage-headers";
import { accountVideoPath } from "./video-store";
import { removeFile } from "../../remove-file";
import type { SandboxHost } from "./sandbox-hosts";

/**
 * Graph's resumable upload (rupload.facebook.com/ig-api-upload/{version}/{container-id}), here at
 * {base}/ig-api-upload/{version}/{container-id}: `Authorization: OAuth <token>`, `offset`,
 * `file_size` and the bytes as the body, or a `file_url` header instead of bytes. An upload that
 * stops short keeps its bytes; the client goes on from `offset` = what arrived. When all
 * `file_size` bytes are in, the container processes them exactly as it processes fetched ones.
 *
 * Failures are answered as the upload endpoint answers them, not as Graph error objects:
 * `{"debug_info": {"retriable", "type", "message"}}` — a refused token as Meta documents it (a
 * ProcessingFailedError whose message is `{"success":false,"error":{"message":"unauthorized user
 * request"}}`), anything else as ProcessingFailedError too, retriable when sending again can work (an upload that
 * stopped short; a fault whose code GRAPH_ERRORS calls transient). Answers carry the usage headers.
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

export async function receiveContainerUpload(
  deps: SandboxDeps,
  request: Request,
  version: string,
  containerId: string,
  host?: SandboxHost,
): Promise<Response> {
  let accountId: string | undefined;
  let throttled: number | undefined;
  const answer = async (response: Response) =>
    accountId ? withUsageHeaders(deps, response, accountId, throttled) : response;
  try {
    const container = await readContainerRecord(deps.redis, containerId);
    if (!container) throw unsupportedRequest("POST", containerId);
    const call: GraphCall = { deps, request, method: "POST", params: {}, baseUrl: "", version, host };
    await requireValidToken(call);
    authorize(call, container.account_id, containerId);
    accountId = container.account_id;
    const refusal = await throttleFor(deps, container.account_id);
    if (refusal) {
      throttled = refusal.code;
      throw refusal;
    }
    const fault = await takeFault(deps, container.account_id, "upload");
    if (fault) {
      throttled = isRateLimitCode(fault.code, fault.subcode) ? fault.code : undefined;
      throw fault;
    }
    if (container.upload_type !== "resumable")
      throw invalidParameter("The container was not created with upload_type=resumable");
    // Everything arrived already (a retry after a lost answer): the same answer again.
    if (!awaitingUpload(container)) {
      // The rest is not wanted; a cancel that fails means the stream is closed already.
      await request.body?.cancel().catch(() => {});
      return answer(graphJson(UPLOAD_SUCCESS));
    }

    const fileUrl = request.headers.get("file_url");
    if (fileUrl) {
      if (!/^https?:\/\//i.test(fileUrl)) throw invalidParameter("The file_url header must be an http or https URL");
      await begin(deps, containerId, { video_url: fileUrl });
      return answer(graphJson(UPLOAD_SUCCESS));
    }

    await receiveBytes(deps, request, container, containerId);
    return answer(graphJson(UPLOAD_SUCCESS));
  } catch (error) {
    if (error instanceof GraphError) return answer(debugInfoResponse(uploadFailureOf(error)));
    if (error instanceof UploadFailure) return answer(debugInfoResponse(error));
    throw error;
  }
}

/** Appends the request's bytes to the container's upload at `offset`; once all `file_size` bytes are in, processing begins. */
async function receiveBytes(
  deps: SandboxDeps,
  request: Request,
  container: ContainerRecord,
  containerId: string,
): Promise<void> {
  const fileSize = headerInteger(request, "file_size");
  const offset = headerInteger(request, "offset");
  const maxBytes = limitsOf(deps).maxVideoBytes;
  if (fileSize < 1) throw invalidParameter("The file_size header must be the video's size in bytes");
  if (fileSize > maxBytes)
    throw invalidParameter(
      `The file is ${formatBytes(fileSize)}; the largest video accepted is ${formatBytes(maxBytes)}`,
    );
  const file = uploadFile(container.account_id, containerId);
  const full = videoPath(deps, file);
  await mkdir(path.dirname(full), { recursive: true });
  const received = (await stat(full).catch(() => undefined))?.size ?? 0;
  if (offset !== received && offset !== 0)
    throw invalidParameter(
      `The offset header is ${offset}, but ${received} bytes were received; resume at offset ${received}`,
    );
  if (!request.body) throw invalidParameter("The request has no body: send the video's bytes, or a file_url header");

  await appendBody(full, request.body, offset, fileSize);
  const total = (await stat(full)).size;
  if (total < fileSize)
    throw new UploadFailure(`The upload stopped at byte ${total} of ${fileSize}; resume with offset ${total}`, true);
  await begin(deps, containerId, { upload_file: file });
  deps.log("info", "sandbox container upload received", {
    container_id: containerId,
    account_id: container.account_id,
    bytes: fileSize,
  });
}

/** Writes the body at `offset` of the file; a body longer than the rest removes what arrived, a broken connection keeps it. */
async function appendBody(
  full: string,
  body: ReadableStream<Uint8Array>,
  offset: number,
  fileSize: number,
): Promise<void> {
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

/** The upload endpoint's own failure, before it is answered as {debug_info}. */
class UploadFailure extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly type = "ProcessingFailedError",
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * Meta's documented answer to a refused token at the upload endpoint: its message is itself JSON.
 * The HTTP status is not documented; the sandbox sends 400, as Graph sends its error objects, so a
 * client that reads the status instead of the body learns nothing from it.
 */
export const UNAUTHORIZED_UPLOAD_MESSAGE = JSON.stringify({
  success: false,
  error: { message: "unauthorized user request" },
});

/** A token the sandbox refuses (104, 190) answers Meta's "unauthorized user request"; anything else a processing failure, retriable when its code is transient. */
function uploadFailureOf(error: GraphError): UploadFailure {
  if (error.code === 104 || error.code === 190) return new UploadFailure(UNAUTHORIZED_UPLOAD_MESSAGE, false);
  return new UploadFailure(error.message, isTransientGraphFailure(error));
}

function debugInfoResponse(failure: UploadFailure): Response {
  return graphJson(
    { debug_info: { retriable: failure.retriable, type: failure.type, message: failure.message } },
    failure.status,
  );
}

async function begin(
  deps: SandboxDeps,
  containerId: string,
  fields: { upload_file?: string; video_url?: string },
): Promise<void> {
  const owner = newAttemptOwner();
  if (await startUploadedContainer(deps.redis, containerId, owner, deps.now(), fields))
    startProcessing(deps, containerId, owner);
}

function headerInteger(request: Request, name: string): number {
  const value = request.headers.get(name);
  if (value === null || !/^\d{1,15}$/.test(value.trim()))
    throw invalidParameter(`The ${name} header is required: a whole number of bytes`);
  return Number(value.trim());
}
