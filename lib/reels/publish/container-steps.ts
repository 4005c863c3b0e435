import { stat } from "node:fs/promises";
import { readUpload, uploadPath } from "../../uploads/upload-store";
import { cacheQuota } from "../../accounts/account-quota";
import type { PublishingLimit } from "../../graph/client";
import { isGraphFailure } from "../../graph/error";
import { recordedReelParameters } from "../publication-record";
import { noContainerIdError, preflightError, unfetchableUploadError, uploadMissingError } from "../publication-error";
import { uploadsByUrl } from "../upload-for-graph";
import { withRetries } from "./graph-retry";
import type { PublicationRun } from "./publication-run";
import { failWith, next, waitFor, type StepResult } from "./step-result";
import { waitOrFail, waitsInstead } from "./waits";

/** The steps that make the container: find the uploaded file, check the video, check the quota, create, upload. */

/**
 * The uploaded file of an upload_id publication; the publication fails when the upload is gone. An
 * Instagram Login account's file is fetched by Graph from a signed address under PUBLIC_URL, so a
 * PUBLIC_URL Graph could not reach fails it here, before any Graph call (as the submit refuses it).
 */
export async function locateVideo(run: PublicationRun): Promise<StepResult> {
  const { record, deps } = run;
  if (!record.upload_id) return next("preflight");
  const upload = deps.dataDir ? await readUpload(deps.redis, record.upload_id) : undefined;
  const path = upload && deps.dataDir ? uploadPath(deps.dataDir, upload.file) : undefined;
  // A file that cannot be read is as missing as one that is gone.
  const size = path ? (await stat(path).catch(() => undefined))?.size : undefined;
  if (!upload || !path || size === undefined) return failWith(uploadMissingError(record.upload_id));
  // An existing container is a resumable one still waiting for its bytes (start() sends only that one here).
  const via = !run.containerId && uploadsByUrl(run.login) ? "url" : "resumable";
  if (via === "url") {
    const reason = deps.uploadUrls
      ? deps.uploadUrls.unreachableReason({ graphUrl: run.accountGraphUrl })
      : "This worker has no PUBLIC_URL address to serve the upload from.";
    if (reason) return failWith(unfetchableUploadError(reason));
  }
  run.upload = { path, size, file: upload.file, via };
  run.uploadUri = record.upload_uri;
  return next(run.containerId ? "upload" : "preflight");
}

/** Probes the video before any container exists: a spec violation fails at once with Graph's code; warnings are kept on the publication. */
export async function preflight(run: PublicationRun): Promise<StepResult> {
  if (!run.deps.preflight) return next("quota");
  const result = await run.deps.preflight(
    run.upload ? { file: run.upload.path } : { url: run.record.video_url },
    run.signal,
  );
  if (result.problems.length > 0) return failWith(preflightError(result.problems));
  const { warnings } = result;
  const detail = `Checked the video before creating a container: ${result.summary}.${warnings.length ? ` Warnings: ${warnings.join("; ")}.` : ""}`;
  await run.step(
    run.status,
    "preflight",
    detail,
    warnings.length ? { warnings: JSON.stringify(warnings) } : {},
    warnings.length ? { warnings } : undefined,
  );
  return next("quota");
}

/** Reads content_publishing_limit before a container is made: with the window's posts used up, the publication waits for a slot. */
export async function checkQuota(run: PublicationRun): Promise<StepResult> {
  let limit: PublishingLimit;
  try {
    limit = await run.graph.readPublishingLimit(run.account, run.signal);
  } catch (error) {
    if (run.signal.aborted) throw run.signal.reason ?? error;
    if (isGraphFailure(error) && waitsInstead(error)) return waitOrFail(error);
    // Advisory: Graph enforces the limit at publish anyway (9 / 2207042), and that waits too.
    return next("create");
  }
  await cacheQuota(run.deps.redis, run.account.accountId, limit);
  if (limit.quota_total === null || limit.quota_usage < limit.quota_total) return next("create");
  const window = Math.round((limit.quota_duration ?? 86400) / 3600);
  return waitFor({
    reason: "quota",
    why: `The account published ${limit.quota_usage} of its ${limit.quota_total} posts in the moving ${window} h`,
    quotaDurationS: limit.quota_duration,
  });
}

export async function createContainer(run: PublicationRun): Promise<StepResult> {
  const { record, upload } = run;
  const resumable = upload?.via === "resumable";
  // locateVideo made sure an upload by url has its addresses.
  const signed =
    upload?.via === "url"
      ? run.deps.uploadUrls!.sign({ uploadId: record.upload_id, publicationId: run.id, file: upload.file }, run.now())
      : undefined;
  await run.step(
    "CREATING",
    "creating",
    signed
      ? `Creating a REELS container that Graph fetches the uploaded video (${upload!.size} bytes) from, at a signed address under PUBLIC_URL valid until ${signed.expiresAt} (an account connected with Instagram Login cannot upload resumably).`
      : upload
        ? `Creating a resumable REELS container for the uploaded video (${upload.size} bytes).`
        : `Creating a REELS container from ${record.video_url}.`,
  );
  const input = {
    ...(resumable ? { resumable: true } : { videoUrl: signed?.url ?? record.video_url }),
    caption: record.caption || undefined,
    shareToFeed: record.share_to_feed,
    reel: recordedReelParameters(record),
  };
  const attempt = await withRetries(run, "Creating the container", () =>
    run.graph.createContainer(run.account, input, run.signal),
  );
  if (!attempt.ok) return waitOrFail(attempt.error);
  const answer = attempt.value;
  if (!answer.id) return failWith(noContainerIdError(answer));
  if (resumable && !answer.uri) return failWith(noContainerIdError(answer, "uri"));
  run.containerId = answer.id;
  run.uploadUri = resumable ? (answer.uri ?? "") : "";
  // Its 24 h life counts from now (publish-steps.ts watches it no longer).
  run.record.container_created_at = run.iso();
  const detail = resumable
    ? `Container ${answer.id} created for a resumable upload.`
    : signed
      ? `Container ${answer.id} created; Graph is fetching the uploaded video from its signed address and processing it.`
      : `Container ${answer.id} created; Graph is processing the video.`;
  const fields = {
    container_id: answer.id,
    container_created_at: run.record.container_created_at,
    ...(resumable ? { upload_uri: run.uploadUri } : {}),
  };
  await run.step("PROCESSING", "created", detail, fields, { container_id: answer.id });
  return next(resumable ? "upload" : "poll");
}

/**
 * Graph's resumable upload: the bytes to the container's uri; then Graph processes them as a
 * fetched video. A failure goes through the same decisions as any Graph call: a refused token
 * waits for a reconnect (the bytes are sent again after it), a rate limit waits, `retriable`
 * is retried, anything else fails.
 */
export async function sendUpload(run: PublicationRun): Promise<StepResult> {
  const upload = run.upload!;
  await run.step("PROCESSING", "uploading", `Uploading ${upload.size} bytes to the container's upload address.`);
  const attempt = await withRetries(run, "Uploading the video", () =>
    run.graph.uploadVideo(run.account, run.uploadUri, upload, run.signal),
  );
  if (!attempt.ok) return waitOrFail(attempt.error);
  await run.step("PROCESSING", "uploaded", "Upload complete; Graph is processing the video.", { upload_done: "1" });
  return next("poll");
}
