import type { ContainerStatus, CreateContainerAnswer } from "../graph/client";
import { subcodeFromContainerStatus } from "../graph/error";
import { classifyGraphError, graphErrorForSubcode } from "../graph/error-table";
import type { PublicationError } from "./publication";
import { failureView, sentence } from "../graph/failure-view";
import { REEL_SPEC_VIOLATION } from "../video/reel-spec";

/**
 * Why a publication failed, in the publication's error shape: Graph's code, subcode and trace id
 * for support, and from the GRAPH_ERRORS table a headline in plain words and what to do (remedy).
 */

/**
 * A container in ERROR names its subcode in `status` (Meta: "Error: Media upload has failed with
 * error code 2207082"); the code comes from the table. When the status also says what is wrong with
 * the video (the sandbox's "… error code 2207026 (unsupported video format: the video is 1.5 s
 * long; …)", or the older "Error: unsupported video format: … (2207026)"), that finding is the headline.
 */
export function containerError(read: ContainerStatus): PublicationError {
  const subcode = subcodeFromContainerStatus(read.status);
  const info = subcode === undefined ? undefined : graphErrorForSubcode(subcode);
  const message = read.status || "The container's processing failed (status_code ERROR).";
  const status = read.status ?? "";
  const [, prefix, detail] =
    /^Error: Media upload has failed with error code \d+ \(([^:]+): (.+)\)$/.exec(status) ??
    /^Error: ([^:]+): (.+?)(?: \(\d+\))?$/.exec(status) ??
    [];
  // What the probe found about the video, after the table's own words for the error (the sandbox writes it so).
  const finding =
    info?.action === "fix-input" && prefix?.toLowerCase() === info.meaning.toLowerCase() ? sentence(detail) : undefined;
  if (!info) {
    return failureView({
      code: null,
      subcode: subcode ?? null,
      message,
      fbtrace_id: read.fbtraceId,
      classification: "new-container",
      headline: "Instagram could not process the video.",
      remedy: "Processing failed; fix the video if the status says why, then publish again with a new container.",
    });
  }
  const { action, advice, headline } = classifyGraphError(info.code, subcode);
  return failureView({
    code: info.code,
    subcode: subcode ?? null,
    message,
    fbtrace_id: read.fbtraceId,
    classification: action,
    headline: finding ?? headline,
    remedy: advice,
  });
}

export function expiredError(fbtraceId: string | null): PublicationError {
  const { action, advice, headline } = classifyGraphError(-2, 2207020);
  return failureView({
    code: -2,
    subcode: 2207020,
    message: "The container expired: it was not published within 24 hours of its creation.",
    fbtrace_id: fbtraceId,
    classification: action,
    headline,
    remedy: advice,
  });
}

export function accountMissingError(accountId: string): PublicationError {
  return failureView({
    code: null,
    subcode: null,
    message: `Account ${accountId} is not configured for this tenant any more.`,
    fbtrace_id: null,
    classification: "reconnect-account",
    headline: `Account ${accountId} is no longer connected.`,
    remedy: "Add the account back to REEL_ACCOUNTS with a valid access token, then publish again.",
  });
}

export function noContainerIdError(answer: CreateContainerAnswer, missing: "id" | "uri" = "id"): PublicationError {
  return failureView({
    code: null,
    subcode: null,
    message:
      missing === "id"
        ? "Graph answered the container creation without a container id."
        : "Graph answered the resumable container creation without an upload uri.",
    fbtrace_id: answer.fbtraceId,
    classification: "stop",
    headline:
      missing === "id"
        ? "Graph created no container: its answer had no id."
        : "Graph gave no address to upload the video to.",
    remedy: "Nothing was published. Graph's whole answer is kept in `response`; publish again once it is understood.",
    response: answer.answer,
  });
}

/** The preflight found the video breaks the reel specification: Graph's own code for it, before any container exists. */
export function preflightError(problems: string[]): PublicationError {
  const { code, subcode, meaning } = REEL_SPEC_VIOLATION;
  const { action, advice } = classifyGraphError(code, subcode);
  return failureView({
    code,
    subcode,
    message: `${meaning}: ${problems.join("; ")} (found by Dispatch's preflight; no container was created)`,
    fbtrace_id: null,
    classification: action,
    headline: sentence(problems.join("; ")) ?? "The video breaks the reel specification.",
    remedy: advice,
  });
}

export function uploadMissingError(uploadId: string | undefined): PublicationError {
  return failureView({
    code: null,
    subcode: null,
    message: `The uploaded video ${uploadId ?? ""} is no longer stored.`,
    fbtrace_id: null,
    classification: "fix-input",
    headline: "The uploaded video is gone (uploads expire).",
    remedy: "Upload the video again and publish it with the new upload_id.",
  });
}

/** An Instagram Login account's upload, with a PUBLIC_URL Graph could not fetch it from: nothing was sent to Graph. */
export function unfetchableUploadError(reason: string): PublicationError {
  return failureView({
    code: null,
    subcode: null,
    message: reason,
    fbtrace_id: null,
    classification: "fix-input",
    headline: "Meta could not fetch the uploaded video from PUBLIC_URL.",
    remedy:
      "Set PUBLIC_URL to an https address the internet reaches Dispatch at, then retry; or publish from a video_url.",
  });
}
