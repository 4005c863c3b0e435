import type { ContainerStatus, CreateContainerAnswer } from "./graph-client";
import { GraphError, GraphPaused, subcodeFromContainerStatus, type GraphFailure } from "./graph-error";
import { classifyGraphError, graphErrorForSubcode } from "./graph-error-table";
import { GraphUploadError } from "./graph-upload-error";
import type { PublicationError } from "./publication";
import { REEL_SPEC_VIOLATION } from "./reel-spec";

/**
 * Why a publication failed, in the publication's error shape: Graph's code, subcode and trace id
 * for support, and from the GRAPH_ERRORS table a headline in plain words and what to do (remedy).
 */

type ErrorFacts = Omit<PublicationError, "advice">;

/** `advice` is kept for clients that read it before `remedy` existed; they say the same. */
function publicationError(facts: ErrorFacts): PublicationError {
  return { ...facts, advice: facts.remedy };
}

/** Graph's error object (or a failure below it); Graph's own words for users (error_user_msg) make the best headline. */
export function errorOf(error: GraphFailure): PublicationError {
  if (error instanceof GraphError) {
    const { action, advice, headline } = classifyGraphError(error.code, error.subcode, error.isTransient);
    return publicationError({
      code: error.code,
      subcode: error.subcode ?? null,
      message: error.message,
      fbtrace_id: error.fbtraceId || null,
      classification: action,
      headline: sentence(error.userMessage) ?? headline,
      remedy: advice,
    });
  }
  if (error instanceof GraphUploadError) return uploadError(error);
  if (error instanceof GraphPaused) {
    return publicationError({
      code: null,
      subcode: null,
      message: error.message,
      fbtrace_id: null,
      classification: "wait-rate-limit",
      headline: "Graph's usage limit for the account or the app is reached.",
      remedy: `Calls wait until ${new Date(error.until).toISOString()}, when Graph said access comes back.`,
    });
  }
  return publicationError({
    code: null,
    subcode: null,
    message: error.message,
    fbtrace_id: error.fbtraceId,
    classification: error.isTransient ? "retry" : "stop",
    headline: error.isTransient
      ? "Graph could not be reached or failed on its side."
      : "Graph's answer was not understood.",
    remedy: error.isTransient
      ? "Graph could not be reached or failed on its side; try again later."
      : "Graph's answer was not understood; check GRAPH_URL and GRAPH_VERSION.",
  });
}

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
    return publicationError({
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
  return publicationError({
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
  return publicationError({
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
  return publicationError({
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
  return publicationError({
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

/** The upload endpoint's {debug_info}: its type and message, and what its `retriable` (or a refused token) calls for. */
function uploadError(error: GraphUploadError): PublicationError {
  const action = error.action;
  return publicationError({
    code: null,
    subcode: null,
    message: `The upload failed: ${error.type}: ${error.message}`,
    fbtrace_id: error.fbtraceId,
    classification: action,
    headline:
      action === "reconnect-account"
        ? "Instagram refused the account's token while the video was uploaded."
        : action === "retry"
          ? "Instagram could not take the video's bytes just now."
          : "Instagram could not process the uploaded video.",
    remedy:
      action === "reconnect-account"
        ? "Reconnect the account; the upload is sent again once it is connected."
        : action === "retry"
          ? "The upload can be sent again; try again later."
          : "The container cannot take the video; publish again with a new container (retry), after checking the video.",
  });
}

/** `code/subcode: message`, for the timeline's retry steps. */
export function describeFailure(error: GraphFailure): string {
  if (error instanceof GraphError) return `${error.code}${error.subcode ? `/${error.subcode}` : ""}: ${error.message}`;
  if (error instanceof GraphUploadError)
    return `${error.type}${error.retriable ? " (retriable)" : ""}: ${error.message}`;
  return error.message;
}

/** "the video is 1.5 s long" → "The video is 1.5 s long."; undefined for nothing. */
function sentence(text: string | undefined | null): string | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** The preflight found the video breaks the reel specification: Graph's own code for it, before any container exists. */
export function preflightError(problems: string[]): PublicationError {
  const { code, subcode, meaning } = REEL_SPEC_VIOLATION;
  const { action, advice } = classifyGraphError(code, subcode);
  return publicationError({
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
  return publicationError({
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
  return publicationError({
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
