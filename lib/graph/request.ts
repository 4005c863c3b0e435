import { recordGraphCall } from "../metrics";
import { GraphError, GraphPaused, GraphTransportError } from "./error";
import { GraphUploadError } from "./upload-error";
import type { GraphClientOptions } from "./client-types";
import { reportToPacer, waitForPace } from "./pacing";
import { readGraphUsage, type GraphUsage } from "./usage";

/**
 * One request to Graph, as the client (client.ts) makes every call: the token as a query
 * parameter on a GET and a body field on a POST (a resumable upload's bytes go to their own
 * address with it in a header), a timeout, Graph's error object read back as a GraphError (an
 * upload's `{debug_info}` as a GraphUploadError), the usage headers read on every answer and
 * handed to the pacer, and the call counted. Tokens never appear in an error message: messages
 * name the path, not the URL.
 */

const DEFAULT_TIMEOUT_MS = 30_000;
/** An upload of up to 300 MB on a slow line. */
const UPLOAD_TIMEOUT_MS = 30 * 60_000;

/** A resumable upload's bytes, sent to the container's own address instead of a Graph path. */
export interface GraphUpload {
  url: URL;
  headers: Record<string, string>;
  body: () => ReadableStream<Uint8Array>;
}

export interface GraphRequest {
  method: "GET" | "POST";
  path: string;
  params: Record<string, string>;
  /** Whose call it is: the token it carries, and the account the pacer counts it against (null: none, e.g. a token check). */
  account: { accountId: string | null; accessToken: string };
  signal?: AbortSignal;
  upload?: GraphUpload;
}

export type GraphAnswer = { body: unknown; fbtraceId: string | null; usage: GraphUsage | undefined };
export type GraphCall = (request: GraphRequest) => Promise<GraphAnswer>;

/** Every call paced (GraphClientOptions.pacer) and counted by endpoint and outcome (dispatch_graph_calls_total). */
export function countedCall(options: GraphClientOptions): GraphCall {
  return async (request) => {
    const { method, path } = request;
    try {
      if (options.pacer) await waitForPace(options.pacer, request.account.accountId, request.signal);
      const answer = await requestGraph(options, request);
      recordGraphCall(method, path, "ok");
      return answer;
    } catch (error) {
      recordGraphCall(method, path, outcomeOf(error));
      throw error;
    }
  };
}

function outcomeOf(error: unknown): string {
  if (error instanceof GraphError) return String(error.code);
  if (error instanceof GraphUploadError) return "upload_error";
  if (error instanceof GraphPaused) return "paused";
  if (error instanceof GraphTransportError) return error.status ? `http_${error.status}` : "network";
  return "aborted";
}

/** The URL and fetch options of a request: the token in the query (GET), in the form (POST), or the upload's own headers. */
function requestOf(
  options: GraphClientOptions,
  request: GraphRequest,
): { url: URL; init: RequestInit & { duplex?: "half" } } {
  const { method, path, params, account, upload } = request;
  const url = upload?.url ?? new URL(`${options.graphUrl.replace(/\/+$/, "")}/${options.version}/${path}`);
  const init: RequestInit & { duplex?: "half" } = { method, headers: { accept: "application/json" } };
  if (upload) {
    init.headers = { ...init.headers, ...upload.headers };
    init.body = upload.body();
    init.duplex = "half";
  } else if (method === "GET") {
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    url.searchParams.set("access_token", account.accessToken);
  } else {
    init.body = new URLSearchParams({ ...params, access_token: account.accessToken }).toString();
    init.headers = { ...init.headers, "content-type": "application/x-www-form-urlencoded" };
  }
  return { url, init };
}

/** One request: Graph's error object becomes a GraphError (with the usage headers), anything else that is not an answer a GraphTransportError. */
async function requestGraph(options: GraphClientOptions, request: GraphRequest): Promise<GraphAnswer> {
  const { method, path, account, signal, upload } = request;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { url, init } = requestOf(options, request);
  const timeout = AbortSignal.timeout(upload ? UPLOAD_TIMEOUT_MS : timeoutMs);
  init.signal = signal ? AbortSignal.any([signal, timeout]) : timeout;

  let response: Response;
  let text: string;
  try {
    signal?.throwIfAborted(); // aborted while the pacer held the call
    response = await options.fetch(url, init);
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const reason = timeout.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
    throw new GraphTransportError(`${method} /${path} failed: ${reason}`, null, true);
  }

  const fbtraceId = response.headers.get("x-fb-trace-id");
  // Meta sends the usage headers on answers, not only on errors: every one is read.
  const usage = readGraphUsage(response.headers);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text, so a creation answer without an id can still be shown as it was
  }
  const graphError = GraphError.fromResponse(body, response.status, fbtraceId ?? undefined);
  if (options.pacer) await reportToPacer(options.pacer, account.accountId, usage, graphError);
  if (graphError) {
    graphError.usage = usage;
    throw graphError;
  }
  // The upload endpoint answers its own failures as {debug_info}, whatever the status.
  const uploadError = upload ? GraphUploadError.fromResponse(body, response.status, fbtraceId) : undefined;
  if (uploadError) throw uploadError;
  if (!response.ok) {
    const transient = response.status >= 500 || response.status === 429;
    throw new GraphTransportError(
      `${method} /${path} answered HTTP ${response.status} without a Graph error object`,
      response.status,
      transient,
      fbtraceId,
    );
  }
  return { body, fbtraceId, usage };
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
