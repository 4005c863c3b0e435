import { randomUUID } from "node:crypto";
import { mkdir, open, rename } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config";
import { ReadableStream } from "node:stream/web";
import { ApiError } from "../errors";
import { readWithin } from "../read-within";
import type { Redis } from "../redis";
import { probeVideo, type VideoProbe } from "../video/probe-video";
import { VideoProbeError } from "../video/video-probe-error";
import { firstFilePart, multipartBoundary } from "./multipart-file";
import {
  recordUpload,
  releaseUploadReservation,
  reserveUploadBytes,
  sweepUploads,
  tenantFolder,
  uploadPath,
} from "./upload-store";
import { removeFile } from "../remove-file";
import { formatMegabytes, uploadTooLargeMessage } from "./upload-limit";

/**
 * POST /api/uploads: the video is streamed to disk (never held in memory), refused past
 * UPLOAD_MAX_BYTES, probed as MP4/MOV, and kept within the tenant's UPLOAD_TENANT_QUOTA_BYTES:
 * the bytes are reserved against the quota before they are written, so parallel uploads never
 * put more than the quota on disk. The body is the bytes themselves (video/mp4, video/quicktime)
 * or a multipart form whose first file part is the video; every byte of a multipart body counts.
 */

export const UPLOAD_CONTENT_TYPES = ["video/mp4", "video/quicktime"] as const;
/** What a multipart body may carry beyond its file: part headers, boundaries, a few small fields. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** The reservation grows by this much at a time, so a large upload costs a Redis call per step, not per chunk. */
const RESERVATION_STEP_BYTES = 4 * 1024 * 1024;

export interface UploadDeps {
  redis: Redis;
  config: Pick<Config, "DATA_DIR" | "UPLOAD_MAX_BYTES" | "UPLOAD_TENANT_QUOTA_BYTES">;
  now?: () => number;
}

export interface UploadAnswer {
  upload_id: string;
  size: number;
}

interface Upload {
  deps: UploadDeps;
  tenantId: string;
  id: string;
}

const SWEEP_EVERY_MS = 60 * 60 * 1000;
let lastSweep = 0;

export async function receiveUpload(deps: UploadDeps, tenantId: string, request: Request): Promise<UploadAnswer> {
  const now = (deps.now ?? Date.now)();
  const upload: Upload = { deps, tenantId, id: randomUUID() };
  const body = uploadBody(deps.config, request);
  const dir = uploadPath(deps.config.DATA_DIR, tenantFolder(tenantId));
  await mkdir(dir, { recursive: true });
  const part = path.join(dir, `${upload.id}.part`);
  let recorded = false;
  try {
    const size = await writeWithin(upload, body, part);
    if (size === 0) throw new ApiError("validation", "The body is empty: send the video's bytes.");
    const probe = await probeUpload(part);
    await keepUpload(upload, part, size, probe, now);
    recorded = true;
    return { upload_id: upload.id, size };
  } finally {
    await removeFile(part); // renamed away when kept: nothing to remove then
    if (!recorded) await releaseUploadReservation(deps.redis, tenantId, upload.id);
    if (now - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = now;
      // A sweep that fails runs again at the next interval.
      void sweepUploads(deps.redis, deps.config.DATA_DIR).catch(() => {});
    }
  }
}

/** The video's bytes out of the request: the body itself, or the first file part of a multipart form. */
function uploadBody(config: UploadDeps["config"], request: Request): Parameters<typeof readWithin>[0] {
  // The boundary is case-sensitive (browsers send ----WebKitFormBoundaryAbC…): only the media type is lower-cased.
  const contentType = request.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  const multipart = mediaType === "multipart/form-data";
  if (!multipart && !(UPLOAD_CONTENT_TYPES as readonly string[]).includes(mediaType)) {
    throw new ApiError(
      "unsupported-media-type",
      "Send the video as video/mp4 or video/quicktime (the bytes as the body), or as multipart/form-data with the file.",
    );
  }
  const bodyLimit = config.UPLOAD_MAX_BYTES + (multipart ? MULTIPART_OVERHEAD_BYTES : 0);
  if (Number(request.headers.get("content-length") ?? "0") > bodyLimit) throw tooLarge(config);
  if (!request.body) throw new ApiError("validation", "The body is empty: send the video's bytes.");
  if (!multipart) return request.body;
  const boundary = multipartBoundary(contentType);
  if (!boundary) throw new ApiError("bad-request", "The multipart body has no boundary in its Content-Type.");
  // A chunked body has no Content-Length to check: its bytes are counted as they arrive, fields and all.
  return ReadableStream.from(
    firstFilePart(ReadableStream.from(bytesWithin(request.body, bodyLimit, () => tooLarge(config))), boundary),
  );
}

/**
 * The body's chunks, refused as soon as they add up to more than `maxBytes`. A reader that stops
 * early (the file part ended before the form did: another field after it, an epilogue; or the
 * upload is refused part-way) leaves the rest read and dropped, still within `maxBytes`: cancelling
 * a request's body closes its connection at once, and the client, still sending, got a reset
 * (ECONNRESET) instead of its answer, even for an upload that was kept.
 */
async function* bytesWithin(
  body: NonNullable<Parameters<typeof readWithin>[0]>,
  maxBytes: number,
  refuse: () => ApiError,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let total = 0;
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || !value) {
        ended = true;
        return;
      }
      total += value.byteLength;
      if (total > maxBytes) throw refuse();
      yield value;
    }
  } finally {
    while (!ended && total <= maxBytes) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || !value) ended = true;
      else total += value.byteLength;
    }
    // Over the limit (refused): the rest is not read, and the connection goes with it.
    if (!ended) await reader.cancel().catch(() => {});
  }
}

const tooLarge = (config: UploadDeps["config"]) =>
  new ApiError("too-large", uploadTooLargeMessage(config.UPLOAD_MAX_BYTES));

/** Streams the file into `destination` through the app's one size-limited reader, reserving quota before each write. */
async function writeWithin(
  upload: Upload,
  body: Parameters<typeof readWithin>[0],
  destination: string,
): Promise<number> {
  const { config } = upload.deps;
  const file = await open(destination, "w");
  let written = 0;
  let reserved = 0;
  try {
    return await readWithin(
      body,
      config.UPLOAD_MAX_BYTES,
      () => tooLarge(config),
      async (chunk) => {
        if (written + chunk.byteLength > reserved)
          reserved = await reserveMore(upload, reserved, written + chunk.byteLength);
        await file.write(chunk);
        written += chunk.byteLength;
      },
    );
  } finally {
    await file.close();
  }
}

/** Grows the upload's reservation to at least `needed` bytes (a step more when the quota allows), or refuses the upload. */
async function reserveMore(upload: Upload, reserved: number, needed: number): Promise<number> {
  const { redis, config } = upload.deps;
  const reserve = (bytes: number) =>
    reserveUploadBytes(redis, upload.tenantId, upload.id, bytes, config.UPLOAD_TENANT_QUOTA_BYTES);
  const ahead = Math.min(Math.max(needed, reserved + RESERVATION_STEP_BYTES), config.UPLOAD_MAX_BYTES);
  if (ahead > needed && (await reserve(ahead)).reserved) return ahead;
  const answer = await reserve(needed);
  if (!answer.reserved) throw overQuota(config, needed, answer.used, "at least ");
  return needed;
}

async function probeUpload(part: string): Promise<VideoProbe> {
  const probe = await probeVideo(part).catch((error: unknown) => {
    if (error instanceof VideoProbeError)
      throw new ApiError("validation", `The file is not an MP4 or MOV video: ${error.message}.`);
    throw error;
  });
  // A movie without a video track can never be a reel: refuse it before it takes quota.
  if (!probe.video) throw new ApiError("validation", "The file has no video track: a reel needs one.");
  return probe;
}

/** Moves the probed file to its name and records it at its exact size in place of its reservation. */
async function keepUpload(upload: Upload, part: string, size: number, probe: VideoProbe, now: number): Promise<void> {
  const { redis, config } = upload.deps;
  const file = `${tenantFolder(upload.tenantId)}/${upload.id}.${probe.container}`;
  await rename(part, uploadPath(config.DATA_DIR, file));
  const record = {
    upload_id: upload.id,
    tenant_id: upload.tenantId,
    size,
    mime: probe.mimeType,
    file,
    created_at: new Date(now).toISOString(),
  };
  const { recorded, used } = await recordUpload(redis, record, config.UPLOAD_TENANT_QUOTA_BYTES).catch(
    async (error: unknown) => {
      await removeFile(uploadPath(config.DATA_DIR, file));
      throw error;
    },
  );
  if (!recorded) {
    await removeFile(uploadPath(config.DATA_DIR, file));
    throw overQuota(config, size, used, "");
  }
}

function overQuota(config: UploadDeps["config"], size: number, used: number, atLeast: string): ApiError {
  return new ApiError(
    "too-large",
    `This video (${atLeast}${formatMegabytes(size)}) would take the tenant's uploads past its ${formatMegabytes(config.UPLOAD_TENANT_QUOTA_BYTES)} quota (${formatMegabytes(used)} in use); uploads are freed when their publications end.`,
  );
}
