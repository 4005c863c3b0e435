import type { z } from "zod";
import { jobListQuerySchema } from "../jobs/read-job";
import { publicationListQuerySchema } from "../reels/read-publication";
import { deliveriesQuerySchema } from "../webhooks/deliveries";
import { retrieveQuerySchema } from "../responses/manage-response";
import { instagramCallbackSchema } from "../accounts/meta-login/connect-with-instagram";
import { metaCallbackSchema } from "../accounts/meta-login/login-callback";
import { UPLOAD_CONTENT_TYPES } from "../uploads/receive-upload";
import { accountInsightsQuerySchema } from "../reels/insights/read-reel-insights";
import { usageQuerySchema } from "../usage/usage-query";
import type { SchemaName } from "./schemas";

/**
 * Every public operation, one entry each: adding a route to the API is adding its entry here (the
 * OpenAPI coverage test names any route file without one). Errors common to a kind of operation
 * (auth, body parsing, Redis away) are added by the document builder; list only the others.
 *
 * Not here: /graph/{version}/… is the sandbox's Meta-compatible Graph surface, documented by Meta;
 * /api/bench/floor exists only in a server the benchmark starts.
 */

/** How Meta's login routes answer when nothing was connected: dashboard pages, whose addresses carry only an id. */
const NOTHING_CONNECTED =
  "Nothing connected: to `/dashboard/accounts/connect?outcome={id}`, a page that says why (the message is kept server-side for this session, never put in the address)";
const SIGNED_OUT =
  "Not signed in (the session ended meanwhile): to `/sign-in?next=/dashboard/accounts/connect?outcome=signed-out` (URL-encoded), which says nothing was connected; nothing stored";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** `csv`: the same answer as text/csv when the query asks for it. */
export type Body =
  { json: SchemaName; sse?: SchemaName; csv?: string } | { sse: SchemaName } | { text: string } | { empty: true };

export interface Operation {
  method: Method;
  /** The OpenAPI path, `{name}` for a route's `[name]` segment. */
  path: string;
  /** Responses answer errors in OpenAI's shape; every other tag in problem+json. */
  tag: "Jobs" | "Responses" | "Reels" | "Accounts" | "Session" | "Operations" | "Webhooks" | "Usage";
  summary: string;
  description?: string;
  /** tenant: API key or session cookie; none: open; metrics: METRICS_TOKEN or this machine. */
  auth: "tenant" | "none" | "metrics";
  /** Path parameters by name, with what they are. */
  params?: Record<string, string>;
  query?: z.ZodObject;
  body?: SchemaName;
  /** A body of bytes instead of JSON: its media types. */
  bytes?: readonly string[];
  /** Answers by status: a schema name for JSON, or another body. */
  responses: Record<number, { description: string } & Body>;
  /** Error statuses beyond the common ones, with when they happen. */
  errors?: Record<number, string>;
  /** Request headers the operation reads, with what they do. */
  headers?: Record<string, string>;
  /** Still answered, to be removed: set on the /api twins of /v1 paths, not written in the table. */
  deprecated?: boolean;
}

/** Resources that began under /api: the table lists their /v1 paths, the /api ones are derived. */
const FORMERLY_API = /^\/v1\/(reels|accounts|uploads)(\/|$)/;

/**
 * The deprecated /api path of a /v1 operation: the same handler, so the same answers, with links
 * (Location) under /api. The connect routes under /api/accounts/connect stay /api only: Meta's
 * registered redirect URIs point there.
 */
function apiTwin(operation: Operation): Operation {
  const inApi = (text: string) => text.replace(/\/v1\/(reels|accounts|uploads)\b/g, "/api/$1");
  const responses = Object.fromEntries(
    Object.entries(operation.responses).map(([status, r]) => [status, { ...r, description: inApi(r.description) }]),
  );
  return {
    ...operation,
    path: inApi(operation.path),
    summary: `${operation.summary} (deprecated path)`,
    description: `Deprecated: use \`${operation.method.toUpperCase()} ${operation.path}\`, which answers the same with links under /v1.${operation.description ? ` ${inApi(operation.description)}` : ""}`,
    responses,
    deprecated: true,
  };
}

const withApiTwins = (operations: Operation[]): Operation[] =>
  operations.flatMap((operation) =>
    FORMERLY_API.test(operation.path) ? [operation, apiTwin(operation)] : [operation],
  );

const jobId = { id: "The job's id (a UUID)." };
const publicationId = { id: "The publication's id (a UUID)." };
const webhookId = { id: "The webhook's id (wh_…)." };

const jobRoutes = (prefix: "" | "/v1"): Operation[] => [
  {
    method: "get",
    path: `${prefix}/jobs/{id}`,
    tag: "Jobs",
    summary: prefix ? "Read a job" : "Read a job (short path)",
    auth: "tenant",
    params: jobId,
    responses: { 200: { description: "The job", json: "Job" } },
    errors: { 404: "Unknown, expired or another tenant's job" },
  },
  {
    method: "post",
    path: `${prefix}/jobs/{id}/cancel`,
    tag: "Jobs",
    summary: prefix ? "Cancel a job" : "Cancel a job (short path)",
    auth: "tenant",
    params: jobId,
    responses: { 200: { description: "The job, CANCELLED unless it had finished already", json: "Job" } },
    errors: { 404: "Unknown, expired or another tenant's job" },
  },
  {
    method: "get",
    path: `${prefix}/jobs/{id}/stream`,
    tag: "Jobs",
    summary: prefix ? "Stream a job's tokens" : "Stream a job's tokens (short path)",
    description:
      "Server-sent events: `event: delta` with `id: <seq>` and a JobStreamMessage as data; `event: reset` when a new attempt starts over (drop the text so far); the message with `is_final: true` ends the stream. Resume with `Last-Event-ID` or `?after=<seq>`. A comment line every 15 s keeps proxies open.",
    auth: "tenant",
    params: jobId,
    headers: { "Last-Event-ID": "The last seq the client saw: the stream resumes after it." },
    responses: { 200: { description: "The job's deltas as server-sent events", sse: "JobStreamMessage" } },
    errors: {
      404: "Unknown, expired or another tenant's job",
      429: "The tenant holds MAX_STREAMS_PER_TENANT streams already",
    },
  },
];

const responseId = { id: "The response's id (resp_…)." };
const responseStreamNote =
  "With `stream: true` the answer is server-sent events, `event:` the type and the whole event as data: response.created, response.queued, response.in_progress, response.output_item.added, response.content_part.added, response.output_text.delta…, response.output_text.done, response.content_part.done, response.output_item.done, then response.completed, response.incomplete, response.failed or response.cancelled.";

/** OpenAI's Responses API (background mode) over jobs (lib/responses). */
const responseRoutes = (): Operation[] => [
  {
    method: "post",
    path: "/v1/responses",
    tag: "Responses",
    summary: "Create a response (an ordinary job)",
    description: `background: true answers the queued response at once; otherwise the call waits for the job and answers it finished (the job goes on if the client leaves). ${responseStreamNote} Parameters Dispatch cannot honour (tools, reasoning, text.format json_schema, previous_response_id…) are refused by name.`,
    auth: "tenant",
    body: "ResponseCreate",
    responses: { 200: { description: "The response, or its events", json: "Response", sse: "ResponseStreamEvent" } },
  },
  {
    method: "get",
    path: "/v1/responses/{id}",
    tag: "Responses",
    summary: "Retrieve a response, or resume its stream",
    description: `With \`?stream=true&starting_after=N\` the events numbered after N, then live ones: no gap, no duplicate. ${responseStreamNote}`,
    auth: "tenant",
    params: responseId,
    query: retrieveQuerySchema,
    responses: { 200: { description: "The response, or its events", json: "Response", sse: "ResponseStreamEvent" } },
    errors: { 404: "Unknown, expired, deleted or another tenant's response" },
  },
  {
    method: "delete",
    path: "/v1/responses/{id}",
    tag: "Responses",
    summary: "Delete a response (cancelled first if it runs)",
    auth: "tenant",
    params: responseId,
    responses: { 200: { description: "Deleted", json: "ResponseDeleted" } },
    errors: {
      404: "Unknown, expired or another tenant's response",
      409: "Its worker has not stopped yet: try again shortly",
    },
  },
  {
    method: "post",
    path: "/v1/responses/{id}/cancel",
    tag: "Responses",
    summary: "Cancel a background response",
    description:
      "Idempotent: a finished response answers as it is. Waits up to 10 s for a running job's worker to stop.",
    auth: "tenant",
    params: responseId,
    responses: { 200: { description: "The response, cancelled unless it had finished", json: "Response" } },
    errors: {
      400: "The response was not created with background: true",
      404: "Unknown, expired or another tenant's response",
    },
  },
];

/** The model list in OpenAI's shape, beside the Responses API. */
const modelRoutes = (): Operation[] => [
  {
    method: "get",
    path: "/v1/models",
    tag: "Responses",
    summary: "The models this deployment serves (the dashboard's list too)",
    auth: "tenant",
    responses: { 200: { description: "The models", json: "ModelList" } },
  },
  {
    method: "get",
    path: "/v1/models/{id}",
    tag: "Responses",
    summary: "One model",
    auth: "tenant",
    params: { id: "The model's name." },
    responses: { 200: { description: "The model", json: "Model" } },
    errors: { 404: "No such model" },
  },
];

export const OPERATIONS: Operation[] = withApiTwins([
  {
    method: "post",
    path: "/v1/jobs",
    tag: "Jobs",
    summary: "Submit a generation job",
    description:
      "Answers once the command is on `ai.generation.requests` (acks=all). The same `job_id` with the same body again answers 200 with the job.",
    auth: "tenant",
    body: "JobCommand",
    responses: {
      202: { description: "Accepted; `Location: /v1/jobs/{id}`", json: "JobAccepted" },
      200: { description: "The same job_id and body again: the existing job", json: "Job" },
    },
    errors: {
      403: "tenant_id is not the key's tenant",
      409: "The job_id is taken by a different command, or its first request is still being accepted",
      429: "Over RATE_LIMIT_PER_MINUTE",
    },
  },
  {
    method: "get",
    path: "/v1/jobs",
    tag: "Jobs",
    summary: "List the tenant's jobs, newest first",
    description:
      "With `status`, only the jobs in that status, from an index kept per status and moved in the same write as the status: a job in that status from the first page to the last is listed exactly once, as without it.",
    auth: "tenant",
    query: jobListQuerySchema,
    responses: {
      200: { description: "A page of jobs, the cursor of the next, and the tenant's running share", json: "JobList" },
    },
  },
  {
    method: "get",
    path: "/v1/usage",
    tag: "Usage",
    summary: "The tenant's usage over time",
    description:
      "Buckets of an hour or a day (UTC) from `from` to `to`, each with its results, in the spirit of OpenAI's usage API: finished jobs (count, tokens, cost, p50/p95 time to first token and tokens per second) and publications that reached a final status (published, failed, cancelled, p50/p95 submit to live). Percentiles come from mergeable histograms (10 buckets a decade), so they hold to about ±13 % over any range. The figures outlive the jobs' records: hours are kept 35 days, days 400.",
    auth: "tenant",
    query: usageQuerySchema,
    responses: {
      200: {
        description: "The buckets, oldest first, every one of the range (`results` empty when nothing happened)",
        json: "UsagePage",
        csv: "With `format=csv`: a header row, then one row per bucket and group; times in ISO 8601",
      },
    },
    errors: {
      422: "The query does not match the schema, `to` is not after `from`, the range is too long for its bucket (31 days of hours, 400 of days), or `from` is older than the bucket is kept",
    },
  },
  ...jobRoutes("/v1"),
  ...jobRoutes(""),
  ...responseRoutes(),
  ...modelRoutes(),
  {
    method: "get",
    path: "/v1/openapi.json",
    tag: "Operations",
    summary: "This document",
    auth: "none",
    responses: { 200: { description: "The OpenAPI 3.1 document", text: "application/json" } },
  },
  {
    method: "post",
    path: "/v1/reels",
    tag: "Reels",
    summary: "Publish a reel (now, or at publish_at)",
    description:
      "From a `video_url` Graph fetches, or an `upload_id` (POST /v1/uploads). An uploaded video goes to Graph by its resumable upload for an account connected with Facebook Login or a pasted token; for one connected with Instagram Login (Meta documents resumable uploads for Facebook Login only) Graph fetches it from a signed, expiring address under PUBLIC_URL (`/media/uploads/…`), so with the real Graph API PUBLIC_URL must be reachable from the internet (https, a public address or a host name), or the request is a 422 naming PUBLIC_URL.",
    auth: "tenant",
    body: "PublicationInput",
    headers: { "Idempotency-Key": "The same key again answers 200 with the publication it created." },
    responses: {
      202: { description: "Accepted; `Location: /v1/reels/{id}`", json: "PublicationAccepted" },
      200: { description: "The same Idempotency-Key again", json: "Publication" },
    },
    errors: {
      409: "The Idempotency-Key was used with a different body, or its first request is still being accepted",
      422: "The body does not match the schema; an unknown, used or another tenant's upload_id; an upload_id for an Instagram Login account while Meta could not reach PUBLIC_URL",
      429: "Over RATE_LIMIT_PER_MINUTE",
    },
  },
  {
    method: "get",
    path: "/v1/reels",
    tag: "Reels",
    summary: "List the tenant's publications, newest first",
    description:
      "With `status`, only the publications in that status, from an index kept per status and moved in the same write as the status: a publication in that status from the first page to the last is listed exactly once, as without it.",
    auth: "tenant",
    query: publicationListQuerySchema,
    responses: { 200: { description: "A page of publications and the cursor of the next", json: "PublicationList" } },
  },
  {
    method: "get",
    path: "/v1/reels/{id}",
    tag: "Reels",
    summary: "Read a publication: status, container, every poll and step, post id, error",
    auth: "tenant",
    params: publicationId,
    responses: { 200: { description: "The publication", json: "Publication" } },
    errors: { 404: "Unknown or another tenant's publication" },
  },
  {
    method: "patch",
    path: "/v1/reels/{id}",
    tag: "Reels",
    summary: "Change a scheduled publication's publish_at or caption",
    auth: "tenant",
    params: publicationId,
    body: "PublicationUpdate",
    responses: { 200: { description: "The publication, changed", json: "Publication" } },
    errors: { 404: "Unknown or another tenant's publication", 409: "The publication is no longer SCHEDULED" },
  },
  {
    method: "delete",
    path: "/v1/reels/{id}",
    tag: "Reels",
    summary: "Cancel a publication before anything reached Graph",
    description: "Allowed while SCHEDULED, or QUEUED before a container exists; the publication ends CANCELLED.",
    auth: "tenant",
    params: publicationId,
    responses: { 200: { description: "The publication, CANCELLED", json: "Publication" } },
    errors: {
      404: "Unknown or another tenant's publication",
      409: "The publication is past the point where it can be cancelled",
    },
  },
  {
    method: "get",
    path: "/v1/reels/{id}/events",
    tag: "Reels",
    summary: "Watch a publication's timeline",
    description:
      "Server-sent events, one PublicationEvent each (`id: <seq>`), from the start or after `Last-Event-ID`; the stream ends once the publication is settled.",
    auth: "tenant",
    params: publicationId,
    headers: { "Last-Event-ID": "The last seq the client saw: the stream resumes after it." },
    responses: { 200: { description: "The timeline as server-sent events", sse: "PublicationEvent" } },
    errors: {
      404: "Unknown or another tenant's publication",
      429: "The tenant holds MAX_STREAMS_PER_TENANT streams already",
    },
  },
  {
    method: "get",
    path: "/v1/reels/{id}/insights",
    tag: "Reels",
    summary:
      "A published reel's insights: views, reach, likes, comments, shares, saves, interactions, average watch time",
    description:
      "Read from Graph's `GET /{ig-media-id}/insights`, cached: Graph is asked on view at most every 15 minutes per reel (and once a day for the last 30 days' reels by the worker). `status` is `pending` while Graph has no figures yet (its data lags up to 48 h; never zeros), `no-permission` when the account's token lacks the insights permission, `failed` when Graph could not be asked (the last figures, if any, are kept).",
    auth: "tenant",
    params: publicationId,
    responses: { 200: { description: "The insights", json: "ReelInsights" } },
    errors: { 404: "Unknown or another tenant's publication", 409: "The publication is not PUBLISHED" },
  },
  {
    method: "post",
    path: "/v1/reels/{id}/resume",
    tag: "Reels",
    summary: "Poll a TIMED_OUT publication's container again, while it lives (24 h from its creation)",
    auth: "tenant",
    params: publicationId,
    responses: { 202: { description: "Queued again", json: "PublicationAccepted" } },
    errors: { 404: "Unknown or another tenant's publication", 409: "The publication is not TIMED_OUT" },
  },
  {
    method: "post",
    path: "/v1/reels/{id}/retry",
    tag: "Reels",
    summary: "Try a FAILED or TIMED_OUT publication again, with a new container",
    description:
      "The same publication id, its history kept; a container that turns out PUBLISHED counts as success, so a reel is never published twice.",
    auth: "tenant",
    params: publicationId,
    responses: { 202: { description: "Queued again", json: "Publication" } },
    errors: { 404: "Unknown or another tenant's publication", 409: "The publication is not FAILED or TIMED_OUT" },
  },
  {
    method: "post",
    path: "/v1/uploads",
    tag: "Reels",
    summary: "Upload a video from disk, to publish by its upload_id",
    description:
      "The bytes as the body (video/mp4, video/quicktime) or a multipart form whose first file part is the video. Streamed to disk; one upload serves one publication.",
    auth: "tenant",
    bytes: [...UPLOAD_CONTENT_TYPES, "multipart/form-data"],
    responses: { 201: { description: "Stored", json: "Upload" } },
    errors: {
      413: "Over UPLOAD_MAX_BYTES (a multipart body: every byte of it, at most 64 KiB more), or past the tenant's UPLOAD_TENANT_QUOTA_BYTES, reserved as the bytes arrive",
      415: "Not a video type or a multipart form",
      422: "Not a video the MP4 probe can read (malformed, a box other than mdat over 16 MB, or no video track)",
    },
  },
  {
    method: "get",
    path: "/v1/accounts",
    tag: "Accounts",
    summary: "The tenant's publishing accounts (never their tokens)",
    auth: "tenant",
    responses: { 200: { description: "The accounts", json: "AccountList" } },
  },
  {
    method: "post",
    path: "/v1/accounts",
    tag: "Accounts",
    summary: "Connect an account (or reconnect it with a new token)",
    description:
      "The token is checked against Graph first (`GET /{account_id}?fields=id,username`), then stored encrypted; it is never returned.",
    auth: "tenant",
    body: "AccountInput",
    responses: { 201: { description: "Connected; `Location: /v1/accounts/{account_id}`", json: "Account" } },
    errors: {
      409: "Another tenant holds this account",
      422: "Graph refused the token",
      503: "Graph could not be reached",
    },
  },
  {
    method: "get",
    path: "/api/accounts/connect/instagram",
    tag: "Accounts",
    summary: "Connect an account with Instagram Login: leave for Instagram's authorize dialog",
    description:
      "For a browser signed in to the dashboard. Redirects to the dialog with `client_id`, `redirect_uri` (PUBLIC_URL + the callback path), `response_type=code`, `scope=instagram_business_basic,instagram_business_content_publish,instagram_business_manage_insights` (the last for reels' insights) and a single-use `state` bound to this session and tenant, valid META_LOGIN_STATE_TTL_S (10 minutes).",
    auth: "tenant",
    responses: { 302: { description: "To Instagram's authorize dialog (`Location`)", empty: true } },
    errors: { 503: "Instagram Login is not configured (INSTAGRAM_APP_ID, INSTAGRAM_APP_SECRET)" },
  },
  {
    method: "get",
    path: "/api/accounts/connect/instagram/callback",
    tag: "Accounts",
    summary: "Where Instagram sends the browser back",
    description:
      "Takes the `state` (once), exchanges the `code` for a short-lived token, that for a long-lived one (about 60 days), reads `me?fields=user_id,username` and stores the account with its encrypted token and `token_expires_at`. A mismatched, replayed or expired state, `error=access_denied` or a refused exchange ends on a dashboard page saying so, and nothing is stored.",
    auth: "tenant",
    query: instagramCallbackSchema,
    responses: {
      303: {
        description: `Connected: to \`/dashboard/accounts?connected={account_id}#account-{account_id}\`. ${NOTHING_CONNECTED} (cancelled, state not valid, Instagram refused). ${SIGNED_OUT}`,
        empty: true,
      },
    },
  },
  {
    method: "get",
    path: "/api/accounts/connect/facebook",
    tag: "Accounts",
    summary: "Connect accounts with Facebook Login for Business: leave for Facebook's OAuth dialog",
    description:
      "For a browser signed in to the dashboard; for Instagram professional accounts linked to a Facebook Page. Redirects to `https://www.facebook.com/{version}/dialog/oauth` (FACEBOOK_DIALOG_URL) with `client_id`, `redirect_uri` (PUBLIC_URL + the callback path), `scope=instagram_basic,instagram_content_publish,instagram_manage_insights,pages_show_list,pages_read_engagement,business_management` (insights need instagram_manage_insights with pages_read_engagement) and a single-use `state` bound to this session and tenant, valid META_LOGIN_STATE_TTL_S (10 minutes).",
    auth: "tenant",
    responses: { 302: { description: "To Facebook's OAuth dialog (`Location`)", empty: true } },
    errors: { 503: "Facebook Login is not configured (FACEBOOK_APP_ID, FACEBOOK_APP_SECRET)" },
  },
  {
    method: "get",
    path: "/api/accounts/connect/facebook/callback",
    tag: "Accounts",
    summary: "Where Facebook sends the browser back",
    description:
      "Takes the `state` (once), exchanges the `code` for a user token, that for a long-lived one (`fb_exchange_token`), lists the Pages (`me/accounts`, with their Page tokens) and reads each Page's `instagram_business_account{id,username}`. One account is stored at once, with its encrypted Page token (which does not expire: `token_expires_at` null), `login: \"facebook\"` and the Facebook Graph host; several are offered on the dashboard's picker page (checkboxes; the choice is kept server-side, bound to this session, single use). A mismatched, replayed or expired state, `error=access_denied` or a refused exchange ends on a dashboard page saying so, and nothing is stored.",
    auth: "tenant",
    query: metaCallbackSchema,
    responses: {
      303: {
        description: `Connected: to \`/dashboard/accounts?connected={account_id}#account-{account_id}\`. Several accounts: to the picker, \`/dashboard/accounts/connect/choose?choice={id}\`, a form posting to \`/api/accounts/connect/facebook/choose\`. ${NOTHING_CONNECTED} (cancelled, state not valid, Facebook refused, no Page with an Instagram account). ${SIGNED_OUT}`,
        empty: true,
      },
    },
  },
  {
    method: "post",
    path: "/api/accounts/connect/facebook/choose",
    tag: "Accounts",
    summary: "The picker's form: connect the Instagram accounts ticked",
    description:
      "`application/x-www-form-urlencoded`: `choice` (the picker's id) and `account_id` once per account ticked. The choice is taken once, by the session that logged in; its accounts are stored as the callback stores one.",
    auth: "tenant",
    bytes: ["application/x-www-form-urlencoded"],
    responses: {
      303: {
        description: `Connected: to \`/dashboard/accounts?connected={account_id}#account-{account_id}\`. ${NOTHING_CONNECTED} (nothing ticked, the choice already made, too old or another session's). ${SIGNED_OUT}`,
        empty: true,
      },
    },
    errors: { 415: "Not a form body" },
  },
  {
    method: "delete",
    path: "/v1/accounts/{account_id}",
    tag: "Accounts",
    summary: "Disconnect an account: its token is deleted",
    auth: "tenant",
    params: { account_id: "One of the tenant's accounts." },
    responses: { 204: { description: "Disconnected", empty: true } },
    errors: { 404: "Not one of the tenant's accounts" },
  },
  {
    method: "get",
    path: "/v1/accounts/{account_id}/posts",
    tag: "Accounts",
    summary: "The account's published reels, read from Graph",
    auth: "tenant",
    params: { account_id: "One of the tenant's accounts." },
    responses: { 200: { description: "The posts", json: "PostList" } },
    errors: { 404: "Not one of the tenant's accounts" },
  },
  {
    method: "get",
    path: "/v1/accounts/{account_id}/insights",
    tag: "Accounts",
    summary: "The account's published reels with their last insights, sorted by any metric",
    description:
      "From Dispatch's cache (never a Graph call): the figures the reels' pages and the daily sweep last read. A reel without the figure sorted by goes last.",
    auth: "tenant",
    params: { account_id: "One of the tenant's accounts." },
    query: accountInsightsQuerySchema,
    responses: { 200: { description: "The reels and their insights", json: "AccountInsightsList" } },
    errors: { 404: "Not one of the tenant's accounts" },
  },
  {
    method: "post",
    path: "/v1/webhooks",
    tag: "Webhooks",
    summary: "Subscribe a URL to job, reel and account events",
    description:
      "Deliveries follow Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` (v1, HMAC-SHA256 with the secret), a JSON body `{type, timestamp, data}`; retried with backoff for at least 24 h. `data` is the job or publication as GET returned it when the event happened (a publication's `polls` and `steps`: the latest 100 of each); for `account.needs_reconnect` (Graph refused the account's token — at a refresh, a publication or a read of the account: connect it again; once per token) and `account.expiring` (its token expires within 7 days and could not be refreshed; sent once per token) it is the account: `{account_id, label, username, status, error?, login, token_expires_at}`.",
    auth: "tenant",
    body: "WebhookInput",
    responses: { 201: { description: "Created; the secret is in this answer only", json: "WebhookCreated" } },
    errors: { 409: "The tenant has as many webhooks as it may" },
  },
  {
    method: "get",
    path: "/v1/webhooks",
    tag: "Webhooks",
    summary: "The tenant's webhooks (without secrets)",
    auth: "tenant",
    responses: { 200: { description: "The webhooks", json: "WebhookList" } },
  },
  {
    method: "get",
    path: "/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Read a webhook",
    auth: "tenant",
    params: webhookId,
    responses: { 200: { description: "The webhook", json: "Webhook" } },
    errors: { 404: "Unknown or another tenant's webhook" },
  },
  {
    method: "delete",
    path: "/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Delete a webhook",
    auth: "tenant",
    params: webhookId,
    responses: { 204: { description: "Deleted", empty: true } },
    errors: { 404: "Unknown or another tenant's webhook" },
  },
  {
    method: "get",
    path: "/v1/webhooks/{id}/deliveries",
    tag: "Webhooks",
    summary: "Every delivery attempt, newest first",
    auth: "tenant",
    params: webhookId,
    query: deliveriesQuerySchema,
    responses: { 200: { description: "The attempts", json: "DeliveryList" } },
    errors: { 404: "Unknown or another tenant's webhook" },
  },
  {
    method: "post",
    path: "/v1/webhooks/{id}/deliveries/{delivery_id}/resend",
    tag: "Webhooks",
    summary: "Deliver an event again",
    description:
      "Due at once. A delivery still being retried keeps its retry window; one delivered or given up gets a new one. Rate-limited per tenant like submissions.",
    auth: "tenant",
    params: { ...webhookId, delivery_id: "The delivery's id (msg_…)." },
    responses: { 202: { description: "Queued for delivery", json: "DeliveryResent" } },
    errors: {
      404: "Unknown webhook or delivery",
      409: "The webhook is disabled, or the delivery is being attempted right now",
      429: "Over RATE_LIMIT_PER_MINUTE resends a minute",
    },
  },
  {
    method: "post",
    path: "/api/session",
    tag: "Session",
    summary: "Sign in: exchange an API key for the dashboard's session cookie",
    auth: "none",
    body: "SignIn",
    responses: { 200: { description: "Signed in; `Set-Cookie` carries the session", json: "Session" } },
    errors: {
      401: "The key is not valid",
      403: "Another site's request",
      429: "Too many failed sign-ins from this address",
    },
  },
  {
    method: "get",
    path: "/api/session",
    tag: "Session",
    summary: "Who is signed in",
    auth: "tenant",
    responses: { 200: { description: "The tenant", json: "Session" } },
  },
  {
    method: "delete",
    path: "/api/session",
    tag: "Session",
    summary: "Sign out: the session is revoked",
    auth: "none",
    responses: { 204: { description: "Signed out", empty: true } },
    errors: { 403: "Another site's request" },
  },
  {
    method: "get",
    path: "/api/system",
    tag: "Operations",
    summary: "Health, workers and their load, consumer lag, the tenant's jobs by status",
    auth: "tenant",
    responses: { 200: { description: "The system's status", json: "SystemStatus" } },
  },
  {
    method: "get",
    path: "/api/health",
    tag: "Operations",
    summary: "Redis, the broker and the workers seen lately, with latencies",
    auth: "none",
    responses: {
      200: { description: "Healthy", json: "Health" },
      503: { description: "Redis or the broker is unreachable", json: "Health" },
    },
  },
  {
    method: "get",
    path: "/api/health/live",
    tag: "Operations",
    summary: "Liveness: the process answers",
    auth: "none",
    responses: { 200: { description: "Alive", json: "Live" } },
  },
  {
    method: "get",
    path: "/api/health/ready",
    tag: "Operations",
    summary: "Readiness: Redis, the broker and at least one worker",
    description:
      "503 problem+json when not ready, with each part that is not in `errors` (path: redis, kafka, workers).",
    auth: "none",
    responses: { 200: { description: "Ready", json: "Ready" } },
  },
  {
    method: "get",
    path: "/metrics",
    tag: "Operations",
    summary: "Prometheus metrics",
    description:
      "Prometheus text format. With METRICS_TOKEN set it asks for it as a bearer token; without, it answers this machine only.",
    auth: "metrics",
    responses: { 200: { description: "The metrics", text: "text/plain; version=0.0.4" } },
    errors: {
      401: "METRICS_TOKEN is set and was not sent",
      403: "No METRICS_TOKEN, and the client is not on this machine",
    },
  },
]);
