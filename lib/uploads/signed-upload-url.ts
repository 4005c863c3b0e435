import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { UPLOAD_ID } from "./upload-store";

/**
 * The address under PUBLIC_URL at which Graph fetches an uploaded video (Instagram Login accounts
 * publish from a video_url; Meta documents resumable uploads for Facebook Login only). It names one
 * upload for one publication until one moment, signed with HMAC-SHA256; anyone without the key can
 * neither make one for another file, nor move its end, nor reuse it for another publication. What
 * the address does not say (whether the publication still waits for Graph's fetch) is checked when
 * it is served: serve-upload-to-graph.ts.
 */

/** Where the web server serves them: a path of its own, outside /api and /v1, with no session or API key (Meta's fetcher has neither). */
export const SIGNED_UPLOAD_PATH = "/media/uploads";

/** Bumped if the signed text changes, so an address signed the old way never verifies the new way. */
const PURPOSE = "dispatch signed upload url v1";

/**
 * The signing key, derived (HKDF) from the accounts key that every web and worker process shares
 * (ACCOUNTS_SECRET or DATA_DIR/accounts-key): a worker on another machine signs what the web
 * server checks, and the accounts key itself never signs anything.
 */
export function uploadUrlKey(accountsKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", accountsKey, Buffer.alloc(0), PURPOSE, 32));
}

export interface UploadUrlGrant {
  uploadId: string;
  publicationId: string;
  /** The upload's file extension as stored (mp4, mov): in the address, so a fetcher that looks at it sees a video. */
  extension: string;
  /** Unix time (s) after which the address answers 403. */
  expiresAtS: number;
}

/** HMAC-SHA256 of what the address grants, base64url: 43 characters. */
function signatureOf(key: Buffer, grant: UploadUrlGrant): string {
  return createHmac("sha256", key)
    .update([PURPOSE, grant.uploadId, grant.extension, grant.publicationId, String(grant.expiresAtS)].join("\n"))
    .digest("base64url");
}

/** The absolute address Graph is given as video_url. */
export function signUploadUrl(key: Buffer, publicUrl: string, grant: UploadUrlGrant): string {
  const query = new URLSearchParams({
    publication: grant.publicationId,
    expires: String(grant.expiresAtS),
    signature: signatureOf(key, grant),
  });
  return `${publicUrl.replace(/\/+$/, "")}${SIGNED_UPLOAD_PATH}/${grant.uploadId}.${grant.extension}?${query}`;
}

/**
 * The grant a request's file name and query prove, or undefined: a malformed name, a signature that
 * is not exactly the one for this upload, publication and end (compared in constant time), or an
 * end that has passed. The caller answers every one of those alike.
 */
export function verifyUploadUrl(
  key: Buffer,
  fileName: string,
  query: URLSearchParams,
  nowMs: number,
): UploadUrlGrant | undefined {
  const name = /^([0-9a-f-]{36})\.(mp4|mov)$/.exec(fileName);
  const uploadId = name?.[1];
  const publicationId = query.get("publication") ?? "";
  const expires = query.get("expires") ?? "";
  const given = Buffer.from(query.get("signature") ?? "");
  if (!name || !uploadId || !UPLOAD_ID.test(uploadId) || !UPLOAD_ID.test(publicationId) || !/^\d{1,12}$/.test(expires))
    return undefined;
  const grant = { uploadId, publicationId, extension: name[2]!, expiresAtS: Number(expires) };
  // Compared as text, not decoded: base64url decoding ignores stray characters, so two texts could
  // decode alike. The length is no secret (every signature has 43); timingSafeEqual needs equal ones.
  const expected = Buffer.from(signatureOf(key, grant));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return nowMs < grant.expiresAtS * 1000 ? grant : undefined;
}
