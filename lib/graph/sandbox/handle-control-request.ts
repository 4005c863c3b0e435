import { timingSafeEqual, createHash } from "node:crypto";
import { z } from "zod";
import { ApiError, toProblem, validationError, zodIssues } from "../../errors";
import { tenantIdSchema } from "../../tenant-id";
import { isJsonType, readBody, tooDeep } from "../../web/http";
import { nestsDeeperThan } from "../../json-depth";
import { fromAnotherSite, fromThisMachine, OWN_FETCHER_HEADER } from "../../net/this-machine";
import { PEER_HEADER } from "../../web/request-guard";
import type { SandboxDeps } from "./deps";
import {
  createSandboxAccount,
  FAULT_KINDS,
  findSandboxAccount,
  queueFault,
  setProcessingMs,
  setPublishLimit,
  type SandboxAccount,
} from "./sandbox-accounts";
import { LONG_LIVED_S, setTokenState, TOKEN_STATES } from "./sandbox-tokens";
import { setContainerProcessingMs } from "./container-writes";
import { setUsage } from "./usage-headers";
import { SANDBOX_INSIGHT_METRICS } from "./insights-growth";
import { setMediaInsights } from "./media-insights";

/**
 * The sandbox's control surface, `/graph/_sandbox/...`: not Meta's interface but the way tests,
 * people rehearsing and outside checks make the sandbox misbehave, all through the same JSON calls:
 *   POST /_sandbox/accounts                       {username?, token_expires_in?, tenant?} → 201 {account_id, access_token}
 *                                                 (token_expires_in: its long-lived tokens lapse that many seconds after issue, old enough to refresh;
 *                                                 tenant: only that tenant's login dialogs offer it, else the first to log in as it holds it)
 *   POST /_sandbox/accounts/{id}/token            {state}                      → the token expires, is revoked, or a new one
 *   POST /_sandbox/accounts/{id}/faults           {on, code, error_subcode?, count} → the next `count` calls fail so
 *                                                 (on: "refresh" for refresh_access_token, e.g. code 190 to refuse it)
 *   PUT  /_sandbox/accounts/{id}/quota            {quota_total}                → the account's 24 h publishing limit
 *   PUT  /_sandbox/accounts/{id}/usage            {call_count?, total_cputime?, total_time?, estimated_time_to_regain_access?, app?}
 *                                                 → the usage headers' figures (at 100 %, or with a time to regain access, calls are refused); {} clears
 *   PUT  /_sandbox/accounts/{id}/processing       {processing_ms}              → how long the account's new containers take to process (null: SANDBOX_PROCESSING_MS)
 *   PUT  /_sandbox/containers/{id}/processing     {processing_ms}              → the same for one container, even while it processes
 *   PUT  /_sandbox/media/{id}/insights            {views?, reach?, likes?, …}  → a published reel's insights, served from now on
 *                                                 (the metrics not named keep growing); {} goes back to the seeded growth
 * Only from this machine (not through a proxy), or with `Authorization: Bearer $SANDBOX_ADMIN_TOKEN`;
 * never from the sandbox's own fetcher or another site's page; bodies are application/json (415 otherwise).
 * Errors are Dispatch's problem+json: nothing here pretends to be Graph.
 */

export const CONTROL_SEGMENT = "_sandbox";

const createAccountBody = z.strictObject({
  username: z
    .string()
    .regex(/^[A-Za-z0-9._]{1,30}$/, "A username is 1-30 letters, digits, dots or underscores")
    .optional(),
  token_expires_in: z
    .number({ error: `Token expires in is whole seconds, from 1 to ${LONG_LIVED_S}` })
    .int()
    .min(1)
    .max(LONG_LIVED_S)
    .optional(),
  tenant: tenantIdSchema.optional(),
});
const tokenBody = z.strictObject({
  state: z.enum(TOKEN_STATES, { error: `State is one of ${TOKEN_STATES.join(", ")}` }),
});
const faultBody = z.strictObject({
  on: z.enum(FAULT_KINDS, { error: `On is one of ${FAULT_KINDS.join(", ")}` }),
  code: z.number({ error: "Code is Graph's error code, a whole number" }).int(),
  error_subcode: z.number().int().optional(),
  count: z.number({ error: "Count is how many calls fail, from 1 to 1000" }).int().min(1).max(1000),
});
const quotaBody = z.strictObject({
  quota_total: z.number({ error: "Quota total is a whole number from 0 to 10000" }).int().min(0).max(10_000),
});
const percent = (name: string) =>
  z
    .number({ error: `${name} is a share in percent, from 0 to 1000` })
    .min(0)
    .max(1000)
    .optional();
const usageFigures = {
  call_count: percent("Call count"),
  total_cputime: percent("Total CPU time"),
  total_time: percent("Total time"),
};
const usageBody = z.strictObject({
  ...usageFigures,
  estimated_time_to_regain_access: z
    .number({ error: "Estimated time to regain access is whole minutes, from 0 to 1440" })
    .int()
    .min(0)
    .max(1440)
    .optional(),
  app: z.strictObject(usageFigures).optional(),
});
const processingBody = z.strictObject({
  processing_ms: z
    .number({ error: "Processing ms is a whole number of milliseconds, from 0 to 86400000, or null" })
    .int()
    .min(0)
    .max(86_400_000)
    .nullable(),
});

const insightsBody = z.strictObject(
  Object.fromEntries(
    SANDBOX_INSIGHT_METRICS.map((m) => [
      m,
      z
        .number({ error: `${m} is a whole number from 0 to 10^12` })
        .int()
        .min(0)
        .max(1e12)
        .optional(),
    ]),
  ) as Record<(typeof SANDBOX_INSIGHT_METRICS)[number], z.ZodOptional<z.ZodNumber>>,
);

export async function handleControlRequest(request: Request, deps: SandboxDeps, path: string[]): Promise<Response> {
  try {
    if (!mayControl(request, deps.config.SANDBOX_ADMIN_TOKEN)) {
      throw new ApiError(
        "forbidden",
        "The sandbox's control surface answers only on this machine, never to another site's page, or with Authorization: Bearer $SANDBOX_ADMIN_TOKEN.",
      );
    }
    const method = request.method.toUpperCase();
    const [collection, accountId, action, ...extra] = path;
    if (collection === "containers" && accountId !== undefined && action === "processing" && extra.length === 0) {
      allow(method, "PUT");
      const { processing_ms } = await readJson(request, processingBody);
      if (!(await setContainerProcessingMs(deps.redis, accountId, processing_ms)))
        throw new ApiError("not-found", `The sandbox has no container ${accountId}.`);
      return reply({ container_id: accountId, processing_ms });
    }
    if (collection === "media" && accountId !== undefined && action === "insights" && extra.length === 0) {
      allow(method, "PUT");
      const values = await readJson(request, insightsBody);
      if (!(await setMediaInsights(deps, accountId, values)))
        throw new ApiError("not-found", `The sandbox has no published reel ${accountId}.`);
      return reply({ media_id: accountId, ...values });
    }
    if (collection !== "accounts" || extra.length > 0)
      throw new ApiError("not-found", "No such control; see README's rehearsal section.");
    if (accountId === undefined) {
      allow(method, "POST");
      const body = await readJson(request, createAccountBody);
      const made = await createSandboxAccount(deps, {
        username: body.username,
        tokenExpiresInS: body.token_expires_in,
        tenantId: body.tenant,
      });
      return reply(body.tenant ? { ...made, tenant: body.tenant } : made, 201);
    }
    const account = await findSandboxAccount(deps, accountId);
    if (!account) throw new ApiError("not-found", `The sandbox has no account ${accountId}.`);
    return await controlAccount(request, deps, method, account, action);
  } catch (error) {
    const { problem, headers } = toProblem(error);
    if (problem.status >= 500) deps.log("error", "sandbox control request failed", { error });
    return new Response(JSON.stringify(problem), {
      status: problem.status,
      headers: { "content-type": "application/problem+json", "cache-control": "no-store", ...headers },
    });
  }
}

/** One account's controls: its token, its queued faults, its publishing limit, usage figures and processing time. */
async function controlAccount(
  request: Request,
  deps: SandboxDeps,
  method: string,
  account: SandboxAccount,
  action: string | undefined,
): Promise<Response> {
  const { accountId } = account;
  switch (action) {
    case "token": {
      allow(method, "POST");
      const { state } = await readJson(request, tokenBody);
      return reply({ account_id: accountId, state, ...(await setTokenState(deps, account, state)) });
    }
    case "faults": {
      allow(method, "POST");
      const fault = await readJson(request, faultBody);
      await queueFault(deps, accountId, fault);
      return reply({ account_id: accountId, ...fault }, 201);
    }
    case "quota": {
      allow(method, "PUT");
      const { quota_total } = await readJson(request, quotaBody);
      await setPublishLimit(deps, accountId, quota_total);
      return reply({ account_id: accountId, quota_total });
    }
    case "usage": {
      allow(method, "PUT");
      const usage = await readJson(request, usageBody);
      await setUsage(deps, accountId, usage);
      return reply({ account_id: accountId, ...usage });
    }
    case "processing": {
      allow(method, "PUT");
      const { processing_ms } = await readJson(request, processingBody);
      await setProcessingMs(deps, accountId, processing_ms);
      return reply({ account_id: accountId, processing_ms });
    }
    default:
      throw new ApiError("not-found", "No such control; see README's rehearsal section.");
  }
}

/**
 * Never the sandbox's own fetcher (a tenant's video_url may point here: it runs on this machine),
 * nor a browser's request from another site's page; otherwise the admin token, or a caller on this machine as /metrics decides it (a loopback peer,
 * and every X-Forwarded-For entry loopback).
 */
function mayControl(request: Request, adminToken: string | undefined): boolean {
  if (request.headers.has(OWN_FETCHER_HEADER)) return false;
  const { headers } = request;
  if (
    fromAnotherSite({
      fetchSite: headers.get("sec-fetch-site"),
      origin: headers.get("origin"),
      host: headers.get("host"),
    })
  )
    return false;
  const header = request.headers.get("authorization");
  const bearer = header ? /^Bearer\s+(\S+)$/i.exec(header.trim())?.[1] : undefined;
  if (adminToken && bearer) return timingSafeEqual(digest(bearer), digest(adminToken));
  return fromThisMachine(request.headers.get(PEER_HEADER), request.headers.get("x-forwarded-for"));
}

function allow(method: string, expected: string): void {
  if (method !== expected)
    throw new ApiError("method-not-allowed", `This control answers ${expected}.`, undefined, { Allow: expected });
}

async function readJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.infer<S>> {
  // JSON only, even empty: a page's form or text/plain fetch can send anything else without a preflight.
  if (!isJsonType(request.headers.get("content-type")))
    throw new ApiError("unsupported-media-type", "Send the body as application/json.");
  const bytes = await readBody(request, 64 * 1024);
  let value: unknown = {};
  if (bytes.byteLength > 0) {
    const text = new TextDecoder().decode(bytes);
    if (nestsDeeperThan(text)) throw tooDeep();
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError("bad-json", "The body is not valid JSON.");
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  return parsed.data;
}

function reply(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
