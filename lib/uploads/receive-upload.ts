import { randomUUID } from "node:crypto";
import { mkdir, open, rename } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config";
import { ReadableStream } from "node:stream/web";
import { ApiError } from "../errors";
import { readWithin } from "../read-within";
import type { Redis } from "../redis";
import { probeVideo, VideoProbeError } from "../reels/probe-video";
import { firstFilePart, multipartBoundary } from "./multipart-file";
import { recordUpload, sweepUploads, tenantFolder, uploadPath } from "./upload-store";
import { removeFile } from "../remove-file";

/**
 * POST /api/uploads: the video is streamed to disk (never held in memory), refused past
 * UPLOAD_MAX_BYTES, probed as MP4/MOV, and recorded within the tenant's UPLOAD_TENANT_QUOTA_BYTES.
 * The body is the bytes themselves (video/mp4, video/quicktime) or a multipart form whose first
 * file part is the video.
 */

export const UPLOAD_CONTENT_TYPES = ["video/mp4", "video/quicktime"] as const;

export interface UploadDeps {
  redis: Redis;
  config: Pick<Config, "DATA_DIR" | "UPLOAD_MAX_BYTES" | "UPLOAD_TENANT_QUOTA_BYTES">;
  now?: () => number;
}

export interface UploadAnswer {
  upload_id: string;
  size: number;
}

const SWEEP_EVERY_MS = 60 * 60 * 1000;
let lastSweep = 0;

export async function receiveUpload(deps: UploadDeps, tenantId: string, request: Request): Promise<UploadAnswer> {
  const { config } = deps;
  const now = (deps.now ?? Date.now)();
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  const mediaType = type.split(";")[0]?.trim() ?? "";
  const multipart = mediaType === "multipart/form-data";
  if (!multipart && !(UPLOAD_CONTENT_TYPES as readonly string[]).includes(mediaType)) {
    throw new ApiError("unsupported-media-type", "Send the video as video/mp4 or video/quicktime (the bytes as the body), or as multipart/form-data with the file.");
  }
  const tooLarge = () => new ApiError("too-large", `The video is over the ${formatMegabytes(config.UPLOAD_MAX_BYTES)} upload limit.`);
  const declared = Number(request.headers.get("content-length") ?? "0");
  // A multipart body carries a little more than the file: its headers and boundaries.
  if (declared > config.UPLOAD_MAX_BYTES + (multipart ? 64 * 1024 : 0)) throw tooLarge();
  if (!request.body) throw new ApiError("validation", "The body is empty: send the video's bytes.");
  let body: Parameters<typeof readWithin>[0] = request.body;
  if (multipart) {
    const boundary = multipartBoundary(type);
    if (!boundary) throw new ApiError("bad-request", "The multipart body has no boundary in its Content-Type.");
    body = ReadableStream.from(firstFilePart(request.body, boundary));
  }

  const id = randomUUID();
  const dir = uploadPath(config.DATA_DIR, tenantFolder(tenantId));
  await mkdir(dir, { recursive: true });
  const part = path.join(dir, `${id}.part`);
  try {
    const size = await writeWithin(body, part, config.UPLOAD_MAX_BYTES, tooLarge);
    if (size === 0) throw new ApiError("validation", "The body is empty: send the video's bytes.");
    const probe = await probeVideo(part).catch((error: unknown) => {
      if (error instanceof VideoProbeError) throw new ApiError("validation", `The file is not an MP4 or MOV video: ${error.message}.`);
      throw error;
    });
    const file = `${tenantFolder(tenantId)}/${id}.${probe.container}`;
    await rename(part, uploadPath(config.DATA_DIR, file));
    const { recorded, used } = await recordUpload(
      deps.redis,
      { upload_id: id, tenant_id: tenantId, size, mime: probe.mimeType, file, created_at: new Date(now).toISOString() },
      config.UPLOAD_TENANT_QUOTA_BYTES,
    );
    if (!recorded) {
      await removeFile(uploadPath(config.DATA_DIR, file));
      throw new ApiError(
        "too-large",
        `This video (${formatMegabytes(size)}) would take the tenant's uploads past its ${formatMegabytes(config.UPLOAD_TENANT_QUOTA_BYTES)} quota (${formatMegabytes(used)} in use); uploads are freed when their publications end.`,
      );
    }
    return { upload_id: id, size };
  } finally {
    await removeFile(part);
    if (now - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = now;
      // A sweep that fails runs again at the next interval.
      void sweepUploads(deps.redis, config.DATA_DIR).catch(() => {});
    }
  }
}

/** Streams the body into `destination` through the app's one size-limited reader. */
async function writeWithin(body: Parameters<typeof readWithin>[0], destination: string, maxBytes: number, tooLarge: () => ApiError): Promise<number> {
  const file = await open(destination, "w");
  try {
    return await readWithin(body, maxBytes, tooLarge, (chunk) => file.write(chunk));
  } finally {
    await file.close();
  }
}

function formatMegabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB` : `${Math.round(bytes / 1024)} KB`;
}
