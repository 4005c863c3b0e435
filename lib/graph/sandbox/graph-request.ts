import type { z } from "zod";
import { ApiError } from "../../errors";
import { readBody } from "../../web/http";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../json-depth";
import { GraphError, newFbtraceId } from "../error";
import type { SandboxDeps } from "./deps";
import { deadTokenError, resolveToken, type ResolvedToken } from "./sandbox-tokens";
import { errorOnHost, tokenFitsHost, wrongHostToken, type SandboxHost } from "./sandbox-hosts";

/** One Graph call as the sandbox sees it: its parameters merged from query and body, as Graph does. */
export interface GraphCall {
  deps: SandboxDeps;
  request: Request;
  method: string;
  params: Record<string, string>;
  /** Absolute base of the sandbox for URLs it hands out, e.g. http://127.0.0.1:3000/graph. */
  baseUrl: string;
  /** The API version segment of the path, e.g. v26.0. */
  version: string;
  /** The account whose valid token made the call, once requireValidToken has checked it. */
  caller?: string;
  /** That token as the sandbox resolved it: which login made it and the permissions it was allowed. */
  token?: ResolvedToken;
  /** Which of Meta's hosts the call came to (sandbox-hosts.ts); "any" when absent. */
  host?: SandboxHost;
}

/** Query parameters, overlaid on POST by a form, multipart or JSON body. */
export async function readGraphParams(request: Request): Promise<Record<string, string>> {
  const params: Record<string, string> = Object.fromEntries(new URL(request.url).searchParams);
  if (request.method !== "POST" || !request.body) return params;
  const body = await readGraphBody(request);
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  // Meta documents no nesting limit; refused as any unreadable body is, before JSON.parse and the stringify below recurse.
  if (type.startsWith("application/json") && nestsDeeperThan(new TextDecoder().decode(body)))
    throw invalidParameter(`The request body nests more than ${MAX_JSON_DEPTH} levels deep`);
  try {
    if (type.startsWith("multipart/form-data") || type.startsWith("application/x-www-form-urlencoded")) {
      const form = await new Response(body, { headers: { "content-type": type } }).formData();
      for (const [key, value] of form) if (typeof value === "string") params[key] = value;
    } else if (type.startsWith("application/json")) {
      const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        for (const [key, value] of Object.entries(parsed)) {
          if (value !== null && value !== undefined)
            params[key] = typeof value === "string" ? value : JSON.stringify(value);
        }
      }
    } else {
      // Graph reads an untyped body as a form, the way curl -d sends it.
      for (const [key, value] of new URLSearchParams(new TextDecoder().decode(body))) params[key] = value;
    }
  } catch {
    throw invalidParameter("The request body could not be parsed");
  }
  return params;
}

/** The body through the app's one size-limited reader; over the limit it is Graph's error with status 413. */
async function readGraphBody(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return (await readBody(request)) as Uint8Array<ArrayBuffer>;
  } catch (error) {
    if (error instanceof ApiError && error.code === "too-large")
      throw new GraphError({ code: 100, message: "(#100) The request body is too large", status: 413 });
    throw error;
  }
}

/** The token from `access_token` or an `Authorization: OAuth|Bearer` header. */
export function accessTokenOf(call: Pick<GraphCall, "params" | "request">): string | undefined {
  const header = call.request.headers.get("authorization");
  const fromHeader = header ? /^(?:OAuth|Bearer)\s+(\S+)$/i.exec(header.trim())?.[1] : undefined;
  return call.params.access_token || fromHeader || undefined;
}

/**
 * That the caller's token may see `objectId`, which `ownerAccountId` owns (the router resolved the
 * token first). Another account's object is, to this token, an object that does not exist: Graph
 * answers 100/33 (GraphMethodException), not a token error — the token itself is fine.
 */
export function authorize(call: GraphCall, ownerAccountId: string, objectId: string): void {
  if (!call.caller) throw missingToken();
  if (call.caller !== ownerAccountId) throw unsupportedRequest(call.method, objectId);
}

/** A token must be valid before anything else is said about the request, as in Graph: the caller's account id. */
export async function requireValidToken(call: GraphCall): Promise<string> {
  const token = accessTokenOf(call);
  if (!token) throw missingToken();
  const resolved = await resolveToken(call.deps, token);
  if (!resolved) throw invalidToken();
  if (!tokenFitsHost(resolved.login, call.host)) throw wrongHostToken();
  if (resolved.state !== "valid") throw deadTokenError(resolved.state, call.deps.now(), resolved.expiredAt);
  call.caller = resolved.accountId;
  call.token = resolved;
  return resolved.accountId;
}

/** `fields=a,b,owner{id}` → ["a", "b", "owner"]; `fallback` when absent. */
export function requestedFields(
  call: GraphCall,
  allowed: readonly string[],
  nodeType: string,
  fallback: readonly string[] = ["id"],
): string[] {
  const raw = call.params.fields;
  if (!raw) return [...fallback];
  const fields = raw
    .replace(/\{[^}]*\}/g, "")
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  const unknown = fields.find((f) => !allowed.includes(f));
  if (unknown) throw invalidParameter(`Tried accessing nonexisting field (${unknown}) on node type (${nodeType})`);
  return [...new Set(fields)];
}

/** Graph's answer for a node: the requested fields that have values, and always the id. */
export function pickFields(values: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) if (values[field] !== undefined && values[field] !== "") out[field] = values[field];
  return { ...out, id: values.id };
}

/** Validates parameters with zod; the first issue becomes Graph's (#100) message. */
export function parseParams<S extends z.ZodType>(schema: S, params: Record<string, string>): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw invalidParameter(parsed.error.issues[0]?.message ?? "Invalid parameter");
}

export function graphJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      "content-type": "application/json; charset=UTF-8",
      "cache-control": "private, no-cache, no-store, must-revalidate",
      "x-fb-trace-id": newFbtraceId(),
      ...headers,
    },
  });
}

/** The error object as `host` answers it (IGApiException on the Instagram host). */
export function graphErrorResponse(graphError: GraphError, host?: SandboxHost): Response {
  const error = errorOnHost(graphError, host);
  const headers: Record<string, string> = { "x-fb-trace-id": error.fbtraceId };
  const challenge = error.code === 190 ? "invalid_token" : error.code === 104 ? "invalid_request" : undefined;
  if (challenge)
    headers["www-authenticate"] = `OAuth "Facebook Platform" "${challenge}" "${error.message.replace(/"/g, "'")}"`;
  return graphJson(error.toBody(), error.status, headers);
}

export function invalidParameter(message: string): GraphError {
  return new GraphError({ code: 100, message: `(#100) ${message}` });
}

/** A call without a token: Graph's 104, not 190 (there is no token to be invalid). */
export function missingToken(): GraphError {
  return new GraphError({ code: 104, message: "An access token is required to request this resource." });
}

export function invalidToken(): GraphError {
  return new GraphError({ code: 190, message: "Invalid OAuth access token - Cannot parse access token" });
}

/** An id the token cannot see: unknown, another account's, or not supporting the call. Instagram-login hosts call the type IGApiException. */
export function unsupportedRequest(method: string, id: string): GraphError {
  return new GraphError({
    code: 100,
    subcode: 33,
    type: "GraphMethodException",
    message: `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
  });
}

/** An edge the node does not have, named as Meta names it: `/{id}/{edge}`. */
export function unknownPath(path: string): GraphError {
  return new GraphError({ code: 2500, message: `Unknown path components: ${path}` });
}
