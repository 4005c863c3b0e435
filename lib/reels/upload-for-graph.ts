import { stat } from "node:fs/promises";
import type { Config } from "../config";
import type { Redis } from "../redis";
import type { AccountLogin } from "../accounts/connected-accounts";
import { unfetchableUrlReason } from "../net/fetchable-public-url";
import { signUploadUrl, uploadUrlKey, verifyUploadUrl } from "../uploads/signed-upload-url";
import { readUpload, uploadPath } from "../uploads/upload-store";
import type { FileToServe } from "../web/file-response";
import { trustedGraphUrl } from "../graph/hosts";
import { CONTAINER_LIFETIME_MS, readPublicationRecord } from "./publication-record";
import { isSettledPublication } from "./status";

/**
 * How an uploaded video reaches Graph. Meta documents resumable uploads (rupload) for apps using
 * Facebook Login only; an account connected with Instagram Login publishes from a video_url that
 * Meta fetches. So for such an account Dispatch hands Graph a signed address under PUBLIC_URL
 * (signed-upload-url.ts) and serves the file there while the container may still fetch it;
 * Facebook Login and pasted-token accounts keep the resumable upload. Decided from the account on
 * every run (a scheduled, retried or resumed publication follows the account as it is then).
 */

/** Whether an account's uploads go to Graph by a fetched video_url rather than by a resumable upload. */
export const uploadsByUrl = (login: AccountLogin) => login === "instagram";

/** What signs the addresses, serves them, and says whether Graph could fetch them: one per process, from its config. */
export interface UploadUrls {
  /** Why Graph could not fetch an address under PUBLIC_URL for this account, naming PUBLIC_URL; undefined when it could. */
  unreachableReason(account: { graphUrl: string | null }): string | undefined;
  /** The video_url for a container made now: valid for the container's 24 h life at most. */
  sign(
    grant: { uploadId: string; publicationId: string; file: string },
    nowMs: number,
  ): { url: string; expiresAt: string };
  /** The file a request's address names, while Graph may still fetch it (uploadForGraph). */
  serve(fileName: string, query: URLSearchParams, nowMs: number): Promise<FileToServe | "forbidden" | "gone">;
}

/** `accountsKey`: the key every process shares (loadAccountsKey); the addresses are signed with a key derived from it. */
export function createUploadUrls(
  config: Pick<
    Config,
    "PUBLIC_URL" | "GRAPH_URL" | "GRAPH_SANDBOX" | "DATA_DIR" | "INSTAGRAM_LOGIN" | "FACEBOOK_LOGIN"
  >,
  accountsKey: Buffer,
  redis: Redis,
): UploadUrls {
  const key = uploadUrlKey(accountsKey);
  return {
    unreachableReason(account) {
      // The built-in sandbox is this server: it fetches its own origin (fetch-and-check.ts allows that).
      // With the sandbox, each login's Graph host is one of its bases (/graph/instagram, /graph/facebook).
      const host = account.graphUrl ?? config.GRAPH_URL;
      const sandboxHosts = [config.GRAPH_URL, config.INSTAGRAM_LOGIN.graphUrl, config.FACEBOOK_LOGIN.graphUrl];
      const bySandbox = config.GRAPH_SANDBOX && trustedGraphUrl(host, sandboxHosts) !== undefined;
      const reason = unfetchableUrlReason(config.PUBLIC_URL, bySandbox ? "this-machine" : "internet");
      return (
        reason &&
        `${reason} An account connected with Instagram Login publishes an uploaded video from an address under PUBLIC_URL that Meta fetches: set PUBLIC_URL to where the internet reaches Dispatch (https), or publish from a video_url.`
      );
    },
    sign({ uploadId, publicationId, file }, nowMs) {
      const expiresAtS = Math.floor((nowMs + CONTAINER_LIFETIME_MS) / 1000);
      const extension = file.endsWith(".mov") ? "mov" : "mp4";
      const url = signUploadUrl(key, config.PUBLIC_URL, { uploadId, publicationId, extension, expiresAtS });
      return { url, expiresAt: new Date(expiresAtS * 1000).toISOString() };
    },
    serve: (fileName, query, nowMs) =>
      uploadForGraph({ redis, dataDir: config.DATA_DIR, key, now: nowMs }, fileName, query),
  };
}

/**
 * The file a signed address names, while Graph may still fetch it: the signature holds and has not
 * expired ("forbidden" otherwise), the upload is still this publication's, and the publication has
 * reached its container (CREATING, or a container_id) without settling ("gone" otherwise: a
 * published, failed, timed-out or cancelled publication's address serves nothing).
 */
async function uploadForGraph(
  deps: { redis: Redis; dataDir: string; key: Buffer; now: number },
  fileName: string,
  query: URLSearchParams,
): Promise<FileToServe | "forbidden" | "gone"> {
  const grant = verifyUploadUrl(deps.key, fileName, query, deps.now);
  if (!grant) return "forbidden";
  const [upload, publication] = await Promise.all([
    readUpload(deps.redis, grant.uploadId),
    readPublicationRecord(deps.redis, grant.publicationId),
  ]);
  if (!upload || !publication || upload.publication_id !== grant.publicationId) return "gone";
  if (publication.upload_id !== grant.uploadId || isSettledPublication(publication.status)) return "gone";
  if (publication.status !== "CREATING" && !publication.container_id) return "gone";
  if (!upload.file.endsWith(`.${grant.extension}`)) return "gone";
  const path = uploadPath(deps.dataDir, upload.file);
  const size = (await stat(path).catch(() => undefined))?.size;
  if (size === undefined) return "gone";
  return {
    path,
    size,
    headers: {
      "content-type": upload.mime,
      etag: `"${grant.uploadId}-${size}"`,
      // Nothing on the way keeps a copy: the address works only as long as the publication waits.
      "cache-control": "private, no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  };
}
