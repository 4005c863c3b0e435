import { recordGraphCall } from "../metrics";
import { GraphError, GraphTransportError } from "./graph-error";
import type { GraphClientOptions } from "./graph-client";
import { readGraphUsage } from "./graph-usage";

/**
 * One request to Graph, as the client (graph-client.ts) makes every call: the token as a query
 * parameter on a GET and a body field on a POST (a resumable upload's bytes go to their own
 * address with it in a header), a timeout, Graph's error object read back as a GraphError, and
 * the call counted. Tokens never appear in an error message: messages name the path, not the URL.
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

export type GraphAnswer = { body: unknown; fbtraceId: string | null };
export type GraphCall = (method: "GET" | "POST", path: string, params: Record<string, string>, accessToken: string, signal?: AbortSignal, upload?: GraphUpload) => Promise<GraphAnswer>;

/** Every call counted by endpoint and outcome (dispatch_graph_calls_total). */
export function countedCall(options: GraphClientOptions): GraphCall {
  return (method, path, ...rest) =>
    requestGraph(options, method, path, ...rest).then(
      (answer) => (recordGraphCall(method, path, "ok"), answer),
      (error: unknown) => {
        recordGraphCall(method, path, error instanceof GraphError ? String(error.code) : error instanceof GraphTransportError ? (error.status ? `http_${error.status}` : "network") : "aborted");
        throw error;
      },
    );
}

/** One request: Graph's error object becomes a GraphError (with the usage headers), anything else that is not an answer a GraphTransportError. */
async function requestGraph(
  options: GraphClientOptions,
  method: "GET" | "POST",
  path: string,
  params: Record<string, string>,
  accessToken: string,
  signal?: AbortSignal,
  upload?: GraphUpload,
): Promise<GraphAnswer> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const url = upload?.url ?? new URL(`${options.graphUrl.replace(/\/+$/, "")}/${options.version}/${path}`);
  const init: RequestInit & { duplex?: "half" } = { method, headers: { accept: "application/json" } };
  if (upload) {
    init.headers = { ...init.headers, ...upload.headers };
    init.body = upload.body();
    init.duplex = "half";
  } else if (method === "GET") {
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    url.searchParams.set("access_token", accessToken);
  } else {
    init.body = new URLSearchParams({ ...params, access_token: accessToken }).toString();
    init.headers = { ...init.headers, "content-type": "application/x-www-form-urlencoded" };
  }
  const timeout = AbortSignal.timeout(upload ? UPLOAD_TIMEOUT_MS : timeoutMs);
  init.signal = signal ? AbortSignal.any([signal, timeout]) : timeout;

  let response: Response;
  let text: string;
  try {
    response = await options.fetch(url, init);
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const reason = timeout.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
    throw new GraphTransportError(`${method} /${path} failed: ${reason}`, null, true);
  }

  const fbtraceId = response.headers.get("x-fb-trace-id");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text, so a creation answer without an id can still be shown as it was
  }
  const graphError = GraphError.fromResponse(body, response.status, fbtraceId ?? undefined);
  if (graphError) {
    graphError.usage = readGraphUsage(response.headers);
    throw graphError;
  }
  if (!response.ok) {
    const transient = response.status >= 500 || response.status === 429;
    throw new GraphTransportError(`${method} /${path} answered HTTP ${response.status} without a Graph error object`, response.status, transient, fbtraceId);
  }
  return { body, fbtraceId };
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
