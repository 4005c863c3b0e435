import { GraphError } from "../error";
import { createContainer, readContainer } from "./containers";
import type { SandboxDeps } from "./deps";
import {
  authorize,
  graphErrorResponse,
  readGraphParams,
  requireValidToken,
  unknownPath,
  unsupportedRequest,
  type GraphCall,
} from "./graph-request";
import { listMedia, readAccount, readMedia, renderPermalinkPage, serveMediaFile } from "./media";
import { readMediaInsights } from "./media-insights";
import { publishContainer, readPublishingLimit } from "./publishing";
import { CONTROL_SEGMENT, handleControlRequest } from "./handle-control-request";
import { findSandboxAccount, takeFault, type FaultKind } from "./sandbox-accounts";
import { readContainerRecord, readMediaRecord } from "./store";
import { receiveContainerUpload } from "./upload-container";
import { throttleFor, withUsageHeaders } from "./usage-headers";
import { handleLoginRequest } from "./oauth/handle-login-request";
import { readMe } from "./oauth/login-tokens";
import { answerFacebookCall } from "./oauth/facebook-tokens";
import { isRateLimitCode } from "../usage";
import { graphVersionLife } from "../versions";
import { hostOfSegment, type SandboxHost } from "./sandbox-hosts";

/**
 * The Graph-compatible sandbox behind `{origin}/graph/...`, with one base per Meta host (sandbox-hosts.ts):
 *   POST /{version}/{ig-user-id}/media                      create a reel container
 *   GET  /{version}/{ig-user-id}/media                      the published reels
 *   POST /{version}/{ig-user-id}/media_publish              publish a FINISHED container
 *   GET  /{version}/{ig-user-id}/content_publishing_limit   quota usage
 *   GET  /{version}/{id}                                    an account, container or reel
 *   GET  /{version}/{media-id}/insights                     a reel's insights (media-insights.ts)
 *   GET  /media-files/{media-id}.mp4                        the kept video (Range supported)
 *   GET  /reel/{shortcode}                                  the permalink page
 *   POST /ig-api-upload/{version}/{container-id}            a resumable container's bytes (upload-container.ts)
 *   /_sandbox/...                                           the control surface (handle-control-request.ts)
 *   /oauth/authorize, /oauth/access_token, /access_token    Instagram Login (oauth/)
 *   /{version}/dialog/oauth, /{version}/oauth/access_token  Facebook Login for Business (oauth/)
 *   GET /{version}/me/accounts, GET /{version}/{page-id}     its Pages (oauth/facebook-tokens.ts)
 */

export interface GraphRouteOptions {
  /** Where the sandbox is mounted; "/graph" in the web app. */
  basePath?: string;
  /** Origin for the URLs the sandbox hands out; the request's own origin when absent. */
  origin?: string;
}

export async function handleGraphRequest(
  request: Request,
  deps: SandboxDeps,
  options: GraphRouteOptions = {},
): Promise<Response> {
  const mount = (options.basePath ?? "/graph").replace(/\/+$/, "");
  const url = new URL(request.url);
  const method = request.method.toUpperCase();
  let host: SandboxHost = "any";
  try {
    if (!url.pathname.startsWith(`${mount}/`)) throw unknownPath(url.pathname);
    const segments = url.pathname
      .slice(mount.length + 1)
      .split("/")
      .filter(Boolean)
      .map(safeDecode);
    host = hostOfSegment(segments[0]) ?? "any";
    const basePath = host === "any" ? mount : `${mount}/${segments.shift()}`;
    const rest = segments.join("/");
    const [first = "", ...path] = segments;
    const baseUrl = `${(options.origin ?? requestOrigin(request, url)).replace(/\/+$/, "")}${basePath}`;

    if (first === CONTROL_SEGMENT && host === "any") return await handleControlRequest(request, deps, path);
    const login = await handleLoginRequest(request, deps, [first, ...path], host);
    if (login) return login;
    const readOnly = method === "GET" || method === "HEAD";
    if (first === "media-files" && path.length === 1 && readOnly)
      return await serveMediaFile(deps, request, path[0] ?? "");
    if (first === "reel" && path.length === 1 && readOnly)
      return await renderPermalinkPage(deps, baseUrl, path[0] ?? "");
    const [version = "", containerId = ""] = path;
    if (first === "ig-api-upload" && path.length === 2 && method === "POST" && isServedVersion(deps, version)) {
      return await receiveContainerUpload(deps, request, version, containerId, host);
    }
    if (!isServedVersion(deps, first)) throw unknownPath(`/${rest}`);
    if (!readOnly && method !== "POST") throw unsupportedRequest(method, path[0] ?? first);

    const call: GraphCall = {
      deps,
      request,
      method: readOnly ? "GET" : method,
      params: await readGraphParams(request),
      baseUrl,
      version: first,
      host,
    };
    const response = await route(call, path);
    return method === "HEAD" ? new Response(null, { status: response.status, headers: response.headers }) : response;
  } catch (error) {
    if (error instanceof GraphError) return graphErrorResponse(error, host);
    deps.log("error", "sandbox request failed", { method, path: url.pathname, error });
    return graphErrorResponse(
      new GraphError({ code: 1, message: "An unknown error has occurred.", isTransient: true }),
    );
  }
}

/**
 * The versions the sandbox answers, by Meta's table (lib/graph/versions.ts) on the sandbox's
 * clock: every live one; an ended one is answered as by the oldest live one, as Meta does; the
 * configured GRAPH_VERSION always (a rehearsal of a version newer than the table). A version not
 * released yet is an unknown path: what Meta answers to one is not documented.
 */
export function isServedVersion(deps: Pick<SandboxDeps, "config" | "now">, version: string): boolean {
  return version === deps.config.GRAPH_VERSION || graphVersionLife(version, deps.now()).state !== "unknown";
}

async function route(call: GraphCall, path: string[]): Promise<Response> {
  const [id, edge, ...extra] = path;
  if (!id || extra.length > 0) throw unknownPath(`/${path.join("/")}`);
  const caller = await requireValidToken(call); // Graph checks the token before it says anything about the object
  let throttled: number | undefined;
  const answer = async () => {
    // Usage set at its limit through the control surface: refused as Meta refuses a throttled account or app.
    const refusal = await throttleFor(call.deps, caller);
    if (refusal) throw refusal;
    return answerFor(call, id, edge);
  };
  const response = await answer().catch((error: unknown) => {
    if (!(error instanceof GraphError)) throw error;
    throttled = isRateLimitCode(error.code, error.subcode) ? error.code : undefined;
    return graphErrorResponse(error, call.host);
  });
  return withUsageHeaders(call.deps, response, caller, throttled);
}

async function answerFor(call: GraphCall, id: string, edge: string | undefined): Promise<Response> {
  const facebook = await answerFacebookCall(call, id, edge);
  if (facebook) return facebook;
  if (edge === undefined) return readNode(call, id);
  if (edge === "insights") return readMediaInsights(call, id);

  const account = await findSandboxAccount(call.deps, id);
  if (!account) throw unsupportedRequest(call.method, id);
  const kind = FAULT_OF_EDGE[`${call.method} ${edge}`];
  if (kind) {
    authorize(call, id, id);
    const fault = await takeFault(call.deps, id, kind);
    if (fault) throw fault;
  }
  switch (`${call.method} ${edge}`) {
    case "POST media":
      return createContainer(call, id);
    case "GET media":
      return listMedia(call, id);
    case "POST media_publish":
      return publishContainer(call, id);
    case "GET content_publishing_limit":
      return readPublishingLimit(call, id);
  }
  if (["media", "media_publish", "content_publishing_limit"].includes(edge)) throw unsupportedRequest(call.method, id);
  throw unknownPath(`/${id}/${edge}`);
}

/** The calls the control surface can make fail, by their names there. */
const FAULT_OF_EDGE: Record<string, FaultKind | undefined> = {
  "POST media": "media",
  "POST media_publish": "media_publish",
};

async function readNode(call: GraphCall, id: string): Promise<Response> {
  if (call.method !== "GET") throw unsupportedRequest(call.method, id);
  if (id === "me") return readMe(call);
  const account = await findSandboxAccount(call.deps, id);
  if (account) return readAccount(call, account);
  const container = await readContainerRecord(call.deps.redis, id);
  if (container) {
    authorize(call, container.account_id, container.id);
    const fault = await takeFault(call.deps, container.account_id, "status");
    if (fault) throw fault;
    return readContainer(call, container);
  }
  const media = await readMediaRecord(call.deps.redis, id);
  if (media) return readMedia(call, media);
  throw unsupportedRequest(call.method, id);
}

/** The origin the caller used (frameworks may rewrite request.url's host), so handed-out URLs work for it. */
function requestOrigin(request: Request, url: URL): string {
  const host =
    request.headers.get("x-forwarded-host")?.split(",")[0]?.trim() || request.headers.get("host") || url.host;
  const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || url.protocol.replace(/:$/, "");
  return /^[A-Za-z0-9.:[\]-]+$/.test(host) && /^https?$/.test(proto) ? `${proto}://${host}` : url.origin;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
