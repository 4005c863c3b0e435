import { GraphError, GraphPaused, type GraphFailure } from "./error";
import { classifyGraphError, type GraphErrorAction } from "./error-table";
import { GraphUploadError } from "./upload-error";

/**
 * A Graph failure as clients read it, whoever met it (a publication, an account's token refresh, an
 * insights read): Graph's code, subcode and trace id for support, and from the code table a
 * headline in plain words and what to do (remedy). Reels call it a PublicationError.
 */
export interface GraphFailureView {
  code: number | null;
  subcode: number | null;
  message: string;
  fbtrace_id: string | null;
  classification: GraphErrorAction;
  /** One sentence in plain words: what went wrong (e.g. "The video is 1.5 s long; reels must be 3 s to 15 min."). */
  headline: string;
  /** What to do about it. */
  remedy: string;
  /** The same as remedy, for clients that read it before remedy existed. */
  advice: string;
  /** The whole answer, when Graph's answer itself was the problem (a creation answer without an id). */
  response?: unknown;
}

type ErrorFacts = Omit<GraphFailureView, "advice">;

/** `advice` is kept for clients that read it before `remedy` existed; they say the same. */
export function failureView(facts: ErrorFacts): GraphFailureView {
  return { ...facts, advice: facts.remedy };
}

/** Graph's error object (or a failure below it); Graph's own words for users (error_user_msg) make the best headline. */
export function errorOf(error: GraphFailure): GraphFailureView {
  if (error instanceof GraphError) {
    const { action, advice, headline } = classifyGraphError(error.code, error.subcode, error.isTransient);
    return failureView({
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
    return failureView({
      code: null,
      subcode: null,
      message: error.message,
      fbtrace_id: null,
      classification: "wait-rate-limit",
      headline: "Graph's usage limit for the account or the app is reached.",
      remedy: `Calls wait until ${new Date(error.until).toISOString()}, when Graph said access comes back.`,
    });
  }
  return failureView({
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

/** The upload endpoint's {debug_info}: its type and message, and what its `retriable` (or a refused token) calls for. */
function uploadError(error: GraphUploadError): GraphFailureView {
  const action = error.action;
  return failureView({
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
export function sentence(text: string | undefined | null): string | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
