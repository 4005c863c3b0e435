import { z } from "zod";
import { authenticate } from "./auth";
import { ApiError, toProblem, validationError, zodIssues } from "../errors";
import { createLog, type Log } from "../log";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../json-depth";
import { readWithin } from "../read-within";
import { isRedisUnavailable, REDIS_RETRY_AFTER_S } from "../redis";
import { getServices, type Services } from "./services";

/** Helpers for route handlers, on the web-standard Request/Response so lib stays framework-free. */

export const MAX_BODY_BYTES = 1024 * 1024;

/** Below this an answer is not worth compressing (the threshold Next.js's compression would apply if it could). */
const COMPRESS_FROM_CHARS = 1024;

/**
 * `no-store`, and for a small answer `no-transform` too. Next.js gzips every route handler's answer
 * to a client that accepts gzip, however small: it drops the Content-Length a handler sets, so its
 * compression's 1 KiB threshold never applies. Gzip on a 100-byte answer makes it larger and costs
 * the web process ~0.3–0.4 ms of CPU, and the client as much time, per answer (a deflate state each;
 * scripts/bench/NOTES.md, seventh session). `no-transform` is what that compression, and any proxy,
 * honours: a small answer goes as it is, a large one is still compressed.
 */
function cacheControlFor(text: string): string {
  return text.length < COMPRESS_FROM_CHARS ? "no-store, no-transform" : "no-store";
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const text = JSON.stringify(body);
  return new Response(text, {
    status,
    headers: { "content-type": "application/json", "cache-control": cacheControlFor(text), ...headers },
  });
}

export function problemResponse(error: unknown, log?: (e: unknown) => void): Response {
  const { problem, headers } = toProblem(error);
  if (problem.status >= 500 && !(error instanceof ApiError)) log?.(error);
  return json(problem, problem.status, { "content-type": "application/problem+json", ...headers });
}

/** `application/json` or a `+json` type, parameters allowed. */
export const isJsonType = (type: string | null) => /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type ?? "");

/** Reads a JSON body: 415 unless JSON, 413 past the size limit, 400 if it does not parse or nests too deep, 422 if the schema says no. */
export async function readJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  maxBytes = MAX_BODY_BYTES,
): Promise<z.infer<S>> {
  if (!isJsonType(request.headers.get("content-type"))) {
    throw new ApiError("unsupported-media-type", "Send the body as application/json.");
  }
  const bytes = await readBody(request, maxBytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("bad-json", "The body is not valid UTF-8.");
  }
  if (nestsDeeperThan(text)) throw tooDeep();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError("bad-json", `The body is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  return parsed.data;
}

/** A JSON body nested past MAX_JSON_DEPTH (lib/json-depth.ts): refused before anything recurses into it. */
export const tooDeep = () =>
  new ApiError("bad-json", `The body nests arrays and objects more than ${MAX_JSON_DEPTH} deep.`);

/**
 * The one way a route reads a body: at most `maxBytes`, refused (413) from the declared length or
 * as soon as a chunked body crosses the limit, so nothing larger is ever held in memory.
 */
export async function readBody(request: Request, maxBytes = MAX_BODY_BYTES): Promise<Uint8Array> {
  const tooLarge = () => new ApiError("too-large", `The body is over ${maxBytes} bytes.`);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge();
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  await readWithin(request.body, maxBytes, tooLarge, (chunk) => chunks.push(chunk));
  return Buffer.concat(chunks);
}

/** Validates route params or a query string with zod; a failure is a 422 (or 404 for ids, at the caller's choice). */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  return parsed.data;
}

type Handler<C> = (request: Request, context: C) => Promise<Response>;

let webLog: Log | undefined;
const logRouteError = (error: unknown) => (webLog ??= createLog("web"))("error", "unhandled route error", { error });

/** How a surface answers an error: problem+json for Dispatch's own API, OpenAI's error object for lib/responses. */
export type ErrorAnswer = (error: unknown, log?: (e: unknown) => void) => Response;

/** Wraps a route handler so every thrown error leaves as `answer` says (problem+json by default; 500s logged, never shown). */
export function withProblems<C>(
  handler: Handler<C>,
  log?: (e: unknown) => void,
  answer: ErrorAnswer = problemResponse,
): Handler<C> {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (error) {
      if (isRedisUnavailable(error)) return answer(redisUnavailable());
      return answer(error, log ?? logRouteError);
    }
  };
}

export interface TenantContext {
  services: Services;
  tenantId: string;
}

/** A route for a signed-in tenant (API key or session): the services and the tenant, errors as problem+json unless `answer` says otherwise. */
export function withTenant<C>(
  handler: (request: Request, tenant: TenantContext, context: C) => Promise<Response>,
  answer?: ErrorAnswer,
): Handler<C> {
  return withProblems(
    async (request, context) => {
      const services = getServices();
      const { tenantId } = await authenticate(request, services);
      return handler(request, { services, tenantId }, context);
    },
    undefined,
    answer,
  );
}

/** Redis is away (refused, timed out, reconnecting): 503 with Retry-After, as for the broker; the client retries. */
export const redisUnavailable = () =>
  new ApiError("unavailable", "The state store (Redis) is unreachable. Try again shortly.", undefined, {
    "Retry-After": String(REDIS_RETRY_AFTER_S),
  });

/** Declared with the cursor (lib/paging.ts), so a feature's list can extend it without importing the web side. */
export { pageQuerySchema } from "../paging";

const ROUTE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type RouteMethod = (typeof ROUTE_METHODS)[number];
type OtherMethods<M> = Record<Exclude<RouteMethod, keyof M>, () => Response> & { OPTIONS: () => Response };

/**
 * Next answers a method a route does not export with an empty 405, and OPTIONS with every method
 * exported. A route ends with `export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET, POST })`:
 * the methods it lacks answer 405 problem+json (or as `answer` says), and OPTIONS 204, both with an
 * Allow header taken from the handlers it has.
 */
export function otherMethods<M extends Partial<Record<RouteMethod, unknown>>>(
  handlers: M,
  answer: ErrorAnswer = problemResponse,
): OtherMethods<M> {
  const allowed: string[] = ROUTE_METHODS.filter((method) => method in handlers);
  if (allowed.includes("GET")) allowed.splice(1, 0, "HEAD");
  const allow = [...allowed, "OPTIONS"].join(", ");
  const notAllowed = () =>
    answer(new ApiError("method-not-allowed", `This endpoint answers ${allow}.`, undefined, { Allow: allow }));
  const lacking = ROUTE_METHODS.filter((method) => !(method in handlers)).map((method) => [method, notAllowed]);
  return {
    ...Object.fromEntries(lacking),
    OPTIONS: () => new Response(null, { status: 204, headers: { Allow: allow } }),
  } as OtherMethods<M>;
}
