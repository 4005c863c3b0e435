import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Redis } from "../redis";
import { removeFile } from "../remove-file";

/**
 * Videos a tenant uploaded for publishing (POST /api/uploads): the files under DATA_DIR/uploads,
 * one folder per tenant, and their records in Redis, read and written only here. A record lives a
 * day until a publication claims it, then as long as a publication may wait; the file goes when
 * its publication ends (discardUpload) or, failing that, with the sweep once its record expired.
 * The tenant's hash of upload sizes is its storage quota.
 */

/** An upload no publication claimed is kept this long. */
export const UNCLAIMED_UPLOAD_TTL_S = 24 * 60 * 60;
/** A claimed upload lives as long as its publication may (a scheduled one waits up to 75 days). */
export const CLAIMED_UPLOAD_TTL_S = 90 * 24 * 60 * 60;
/** After a publication fails or times out, its upload stays this long for a retry, then expires. */
export const ENDED_UPLOAD_TTL_S = 24 * 60 * 60;
/** A file younger than this is never swept: its upload may be between writing and recording. */
const FILE_GRACE_MS = 10 * 60 * 1000;

export const uploadKeys = {
  upload: (id: string) => `upload:${id}`,
  /** hash upload id → bytes: what the tenant stores now, and what its uploads being received have reserved. */
  tenant: (tenantId: string) => `tenant:uploads:${tenantId}`,
  /** Exists while an upload being received holds its reservation in the tenant's hash. */
  reservation: (id: string) => `upload-reservation:${id}`,
};

export const UPLOAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const uploadRecordSchema = z.object({
  upload_id: z.string(),
  tenant_id: z.string(),
  size: z.coerce.number(),
  mime: z.enum(["video/mp4", "video/quicktime"]),
  /** Relative to uploadsDir. */
  file: z.string(),
  created_at: z.string(),
  publication_id: z.string().default(""),
});

export type UploadRecord = z.infer<typeof uploadRecordSchema>;

/** The tenant's folder under uploadsDir; a tenant id may be "." or "..", which must not name a parent folder. */
export function tenantFolder(tenantId: string): string {
  return /^\.+$/.test(tenantId) ? `_${tenantId}` : tenantId;
}

export function uploadsDir(dataDir: string): string {
  return path.resolve(dataDir, "uploads");
}

/** Data under DATA_DIR, never code: the comment keeps Next's build from tracing the project into the output. */
export function uploadPath(dataDir: string, file: string): string {
  return path.join(/*turbopackIgnore: true*/ uploadsDir(dataDir), file);
}

export async function readUpload(redis: Redis, id: string): Promise<UploadRecord | undefined> {
  if (!UPLOAD_ID.test(id)) return undefined;
  const parsed = uploadRecordSchema.safeParse(await redis.hgetall(uploadKeys.upload(id)));
  return parsed.success ? parsed.data : undefined;
}

/** While a body streams in, the bytes it may still write are reserved against the quota this long (renewed as it grows). */
const RESERVATION_TTL_S = 10 * 60;

// Sums the tenant's other live uploads and reservations (forgetting expired ones) into `used`.
const SUM_OTHERS = `
local used = 0
local sizes = redis.call('HGETALL', KEYS[1])
for i = 1, #sizes, 2 do
  if sizes[i] ~= ARGV[3] then
    if redis.call('EXISTS', ARGV[4] .. sizes[i]) == 1 or redis.call('EXISTS', ARGV[5] .. sizes[i]) == 1 then used = used + tonumber(sizes[i + 1])
    else redis.call('HDEL', KEYS[1], sizes[i]) end
  end
end
if used + tonumber(ARGV[2]) > tonumber(ARGV[1]) then return {0, used} end`;

// Sets the upload's share of the quota to ARGV[2] bytes while it is being received, if it fits.
const RESERVE_UPLOAD = `${SUM_OTHERS}
redis.call('SET', KEYS[2], '1', 'EX', ARGV[6])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
return {1, used}`;

// Records the upload at its exact size in place of its reservation, if it fits the quota.
const RECORD_UPLOAD = `${SUM_OTHERS}
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[3], unpack(ARGV, 7))
redis.call('EXPIRE', KEYS[3], ARGV[6])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
return {1, used}`;

const quotaArgs = (tenantId: string, uploadId: string, quotaBytes: number, bytes: number, ttlSeconds: number) => [
  uploadKeys.tenant(tenantId),
  uploadKeys.reservation(uploadId),
  quotaBytes,
  bytes,
  uploadId,
  uploadKeys.upload(""),
  uploadKeys.reservation(""),
  ttlSeconds,
];

/**
 * Holds `bytes` of the tenant's quota for an upload still streaming in, so parallel uploads can
 * never put more than the quota on disk; `{ reserved: false, used }` when it does not fit.
 */
export async function reserveUploadBytes(
  redis: Redis,
  tenantId: string,
  uploadId: string,
  bytes: number,
  quotaBytes: number,
): Promise<{ reserved: boolean; used: number }> {
  const [tenantKey, reservationKey, ...args] = quotaArgs(tenantId, uploadId, quotaBytes, bytes, RESERVATION_TTL_S);
  const [reserved, used] = (await redis.eval(RESERVE_UPLOAD, 2, tenantKey, reservationKey, ...args)) as [
    number,
    number,
  ];
  return { reserved: reserved === 1, used };
}

/** Gives back the reservation of an upload that was refused or failed. */
export async function releaseUploadReservation(redis: Redis, tenantId: string, uploadId: string): Promise<void> {
  const reservation = uploadKeys.reservation(uploadId);
  await redis.eval(
    `if redis.call('DEL', KEYS[2]) == 1 then redis.call('HDEL', KEYS[1], ARGV[1]) end`,
    2,
    uploadKeys.tenant(tenantId),
    reservation,
    uploadId,
  );
}

/** Records an upload within the tenant's quota (replacing its reservation); `{ recorded: false, used }` when it does not fit. */
export async function recordUpload(
  redis: Redis,
  record: Omit<UploadRecord, "publication_id">,
  quotaBytes: number,
): Promise<{ recorded: boolean; used: number }> {
  const [tenantKey, reservationKey, ...args] = quotaArgs(
    record.tenant_id,
    record.upload_id,
    quotaBytes,
    record.size,
    UNCLAIMED_UPLOAD_TTL_S,
  );
  const fields = Object.entries(record).flatMap(([k, v]) => [k, String(v)]);
  const [recorded, used] = (await redis.eval(
    RECORD_UPLOAD,
    3,
    tenantKey,
    reservationKey,
    uploadKeys.upload(record.upload_id),
    ...args,
    ...fields,
  )) as [number, number];
  return { recorded: recorded === 1, used };
}

const CLAIM_UPLOAD = `
if redis.call('HGET', KEYS[1], 'tenant_id') ~= ARGV[1] then return 0 end
local owner = redis.call('HGET', KEYS[1], 'publication_id') or ''
if owner ~= '' and owner ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], 'publication_id', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`;

/** Gives an upload to one publication: "missing" if unknown, expired or another tenant's; "taken" if another publication has it. */
export async function claimUpload(
  redis: Redis,
  tenantId: string,
  uploadId: string,
  publicationId: string,
): Promise<"claimed" | "missing" | "taken"> {
  if (!UPLOAD_ID.test(uploadId)) return "missing";
  const result = await redis.eval(
    CLAIM_UPLOAD,
    1,
    uploadKeys.upload(uploadId),
    tenantId,
    publicationId,
    CLAIMED_UPLOAD_TTL_S,
  );
  return result === 1 ? "claimed" : result === -1 ? "taken" : "missing";
}

const RELEASE_UPLOAD = `
if redis.call('HGET', KEYS[1], 'publication_id') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'publication_id', '')
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Gives an upload back, unclaimed for a day again, when the publication that claimed it was never accepted. */
export async function releaseUpload(redis: Redis, uploadId: string, publicationId: string): Promise<void> {
  if (UPLOAD_ID.test(uploadId))
    await redis.eval(RELEASE_UPLOAD, 1, uploadKeys.upload(uploadId), publicationId, UNCLAIMED_UPLOAD_TTL_S);
}

/** Frees an upload whose publication ended (or was never accepted): its file, its record, its share of the quota. */
export async function discardUpload(redis: Redis, dataDir: string, uploadId: string): Promise<void> {
  const record = await readUpload(redis, uploadId);
  if (!record) return;
  await removeFile(uploadPath(dataDir, record.file));
  await redis.multi().del(uploadKeys.upload(uploadId)).hdel(uploadKeys.tenant(record.tenant_id), uploadId).exec();
}

/** Keeps an upload `seconds` more at most (a failed publication may be retried meanwhile); the sweep takes its file after. */
export async function expireUpload(redis: Redis, uploadId: string, seconds = ENDED_UPLOAD_TTL_S): Promise<void> {
  if (UPLOAD_ID.test(uploadId)) await redis.expire(uploadKeys.upload(uploadId), seconds, "LT");
}

/** Removes files whose record is gone (expired unclaimed, or a publication that ended without discarding). */
export async function sweepUploads(redis: Redis, dataDir: string, now = Date.now()): Promise<number> {
  const root = uploadsDir(dataDir);
  let removed = 0;
  for (const tenant of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (!tenant.isDirectory()) continue;
    for (const name of await readdir(path.join(root, tenant.name)).catch(() => [] as string[])) {
      const id = /^([0-9a-f-]{36})\.(mp4|mov|part)$/.exec(name)?.[1];
      if (!id || (await redis.exists(uploadKeys.upload(id)))) continue;
      const full = path.join(root, tenant.name, name);
      const info = await stat(full).catch(() => undefined);
      if (!info || now - info.mtimeMs < FILE_GRACE_MS) continue;
      await removeFile(full);
      removed++;
    }
  }
  return removed;
}
