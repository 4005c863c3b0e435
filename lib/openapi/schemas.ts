import { z } from "zod";
import { DEFAULT_MAX_PROMPT_CHARS } from "../config";
import { commandInputSchema } from "../jobs/command";
import { FINAL_JOB_STATUSES, FINISH_REASONS, JOB_STATUSES } from "../jobs/status";
import { TOKEN_REFRESHES } from "../accounts/account";
import { connectAccountSchema } from "../accounts/connect-account";
import { SCHEDULED_REASONS } from "../reels/publication";
import { publicationInputSchema, publicationUpdateSchema } from "../reels/publication-input";
import { responseRequestSchema } from "../responses/request";
import { RESPONSE_STATUSES } from "../responses/response-object";
import { PUBLICATION_STATUSES } from "../reels/status";
import { GRADUATION_STRATEGIES } from "../graph/reel-parameter-limits";
import { INSIGHTS_STATUSES, REEL_INSIGHT_METRICS } from "../graph/insights-metrics";
import { signInSchema } from "../web/sessions";
import { WEBHOOK_EVENT_TYPES } from "../webhooks/events";
import { webhookInputSchema } from "../webhooks/input";
import { USAGE_BUCKETS } from "../usage/usage-keys";
import { USAGE_GROUPS } from "../usage/usage-query";

/**
 * The named schemas of the OpenAPI document. Request bodies are the very zod schemas the routes
 * validate with (imported, never copied); responses, which TypeScript interfaces describe in lib,
 * are written here as loose objects: a field added to a view does not make the document wrong.
 */

const isoTime = z.string().meta({ format: "date-time" });
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

const problem = z
  .looseObject({
    type: z.string().meta({ example: "/problems/validation" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ description: "RFC 9457 problem details: every error of the API." });

const usage = z.looseObject({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

const job = z.looseObject({
  job_id: z.uuid(),
  tenant_id: z.string(),
  model_name: z.string(),
  status: z.enum(JOB_STATUSES),
  finish_reason: nullable(z.enum(FINISH_REASONS))
    .optional()
    .meta({ description: "Why generation stopped; null until the job is final." }),
  prompt: z.string(),
  temperature: z.number(),
  max_tokens: z.number().int(),
  output: z.string(),
  usage: nullable(usage),
  cost: nullable(z.looseObject({ currency: z.literal("USD"), amount: z.number() })),
  cost_note: nullable(z.string()).optional().meta({ description: "Why cost is null, when it is." }),
  created_at: isoTime,
  started_at: nullable(isoTime),
  completed_at: nullable(isoTime),
  ttft_ms: nullable(z.number()),
  tokens_per_second: nullable(z.number()),
  attempts: z.number().int(),
  error: nullable(z.string()),
  stream_url: z.string(),
});

const model = z.looseObject({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int().meta({ description: "Unix seconds: when this server started serving it." }),
  owned_by: z.string(),
  provider: z.string(),
  version: z.string(),
  description: z.string(),
});

const responseObject = z
  .looseObject({
    id: z.string().meta({
      example: "resp_0b0e7a395b1c4c1d9a573b2a7d1e0f00",
      description: "`resp_` and the job's id without dashes: GET /jobs/{id} shows the same job.",
    }),
    object: z.literal("response"),
    created_at: z.number().int(),
    status: z.enum(RESPONSE_STATUSES),
    background: z.boolean(),
    model: z.string(),
    output: z.array(
      z.looseObject({
        id: z.string(),
        type: z.literal("message"),
        role: z.literal("assistant"),
        status: z.enum(["in_progress", "completed", "incomplete"]),
        content: z.array(z.looseObject({ type: z.literal("output_text"), text: z.string() })),
      }),
    ),
    usage: nullable(
      z.looseObject({
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
      }),
    ),
    incomplete_details: nullable(z.looseObject({ reason: z.literal("max_output_tokens") })),
    error: nullable(z.looseObject({ code: z.string(), message: z.string() })),
    instructions: nullable(z.string()),
    metadata: z.record(z.string(), z.string()),
    temperature: z.number(),
    max_output_tokens: nullable(z.number().int()),
  })
  .meta({ description: "OpenAI's Response object, built from the job's record." });

const tenantLoad = z.looseObject({ running: z.number().int(), waiting: z.number().int(), limit: z.number().int() });

const publicationError = z.looseObject({
  code: nullable(z.number().int()),
  subcode: nullable(z.number().int()),
  message: z.string(),
  fbtrace_id: nullable(z.string()),
  headline: z.string().optional(),
  remedy: z.string().optional(),
});

const publication = z.looseObject({
  publication_id: z.uuid(),
  tenant_id: z.string(),
  account_id: z.string(),
  video_url: nullable(z.string()).meta({ description: "The video's URL, or null when it was uploaded (upload_id)." }),
  upload_id: nullable(z.string()).optional(),
  caption: z.string(),
  share_to_feed: z.boolean(),
  cover_url: nullable(z.string()).optional(),
  thumb_offset: nullable(z.number().int()).optional(),
  audio_name: nullable(z.string()).optional(),
  collaborators: z.array(z.string()).optional(),
  location_id: nullable(z.string()).optional(),
  user_tags: z
    .array(z.looseObject({ username: z.string(), x: z.number().optional(), y: z.number().optional() }))
    .optional(),
  trial_params: nullable(z.looseObject({ graduation_strategy: z.enum(GRADUATION_STRATEGIES) }))
    .optional()
    .meta({ description: "The reel parameters as submitted (see PublicationInput); null or empty when not given." }),
  publish_at: nullable(isoTime),
  status: z.enum(PUBLICATION_STATUSES).meta({
    description:
      "PROCESSING while Graph processes the container: read every REEL_POLL_INTERVAL_MS for REEL_POLL_ATTEMPTS reads, then once per REEL_WATCH_INTERVAL_MS (a minute, as Meta advises; the `watching` step) until it settles, and published by itself once FINISHED. TIMED_OUT only when the container never finished processing in its 24 h life.",
  }),
  scheduled_reason: nullable(z.enum(SCHEDULED_REASONS)).optional().meta({
    description:
      "Why a SCHEDULED publication waits, when not for its publish_at: quota (the moving 24 h's posts used up), needs_reconnect (Graph refused the token: 104, 190, 10, 200–299), rate_limited (a rate-limit refusal, or Graph's usage headers at 100 % or naming a time to regain access).",
  }),
  warnings: z
    .array(z.string())
    .optional()
    .meta({ description: "What the preflight found that Graph accepts but may not like." }),
  container_id: nullable(z.string()),
  last_status_code: nullable(z.string()),
  polls: z.array(
    z.looseObject({
      seq: z.number().int(),
      attempt: z.number().int(),
      at: isoTime,
      status_code: nullable(z.string()),
      status: nullable(z.string()),
    }),
  ),
  steps: z.array(z.looseObject({ seq: z.number().int(), at: isoTime, step: z.string(), detail: z.string() })),
  post_id: nullable(z.string()),
  permalink: nullable(z.string()),
  error: nullable(publicationError),
  created_at: isoTime,
  updated_at: isoTime,
});

const account = z.looseObject({
  account_id: z.string(),
  label: nullable(z.string()),
  username: nullable(z.string()),
  status: z.enum(["connected", "needs_reconnect"]),
  error: publicationError.optional().meta({ description: "The Graph error that made the account need reconnecting." }),
  quota: z.looseObject({
    quota_usage: nullable(z.number()),
    quota_total: nullable(z.number()),
    quota_duration: nullable(z.number()),
  }),
  rate_limited_until: nullable(isoTime).meta({
    description:
      "While Graph's usage headers (X-App-Usage, X-Business-Use-Case-Usage) put the account or the app at its limit, or Graph refused a call as rate-limited: when its calls may go out again. Its reels wait (SCHEDULED, scheduled_reason rate_limited) until then. Null when calls are not held back.",
  }),
  sandbox: z.boolean(),
  connected_at: isoTime,
  login: z.enum(["token", "instagram", "facebook"]).meta({
    description:
      "How it was connected: a pasted token (or REEL_ACCOUNTS), Instagram Login, or Facebook Login for Business (a Page token).",
  }),
  token_expires_at: nullable(isoTime).meta({
    description:
      "When its token stops working (Instagram Login: about 60 days); null when it does not expire (Facebook Login's Page tokens) or Dispatch was not told.",
  }),
  token_refresh: z.enum(TOKEN_REFRESHES).meta({
    description:
      "Whether Dispatch keeps the token alive: `automatic` (Instagram Login: refreshed TOKEN_REFRESH_BEFORE_S before its expiry), `failing` (its refreshes failed within 7 days of its expiry; account.expiring was sent: reconnect it), `none` (a pasted token, REEL_ACCOUNTS or a Page token: reconnect before token_expires_at, if it has one; any token of an account that needs reconnecting).",
  }),
});

const reelInsights = z.looseObject({
  publication_id: z.uuid(),
  media_id: z.string(),
  account_id: z.string(),
  status: z.enum(INSIGHTS_STATUSES),
  metrics: nullable(
    z.looseObject(Object.fromEntries(REEL_INSIGHT_METRICS.map((m) => [m, nullable(z.number())]))).meta({
      description: "The last figures Graph gave; ig_reels_avg_watch_time in milliseconds.",
    }),
  ),
  fetched_at: nullable(isoTime),
  checked_at: nullable(isoTime),
  next_refresh_at: nullable(isoTime),
  message: nullable(z.string()),
  published_at: isoTime,
});

const webhook = z.looseObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  created_at: isoTime,
  status: z.enum(["enabled", "disabled"]),
  disabled_at: nullable(isoTime),
  disabled_reason: nullable(z.string()),
});

const accepted = (id: "job_id" | "publication_id") => z.looseObject({ [id]: z.uuid(), status: z.string() });

const percentiles = nullable(z.looseObject({ p50: z.number(), p95: z.number() })).meta({
  description: "Estimated from a histogram of 10 buckets a decade: within one bucket (about ±13 %) of the exact value.",
});

const usagePage = z.looseObject({
  object: z.literal("page"),
  bucket: z.enum(USAGE_BUCKETS),
  group_by: nullable(z.enum(USAGE_GROUPS)),
  data: z.array(
    z.looseObject({
      object: z.literal("bucket"),
      start_time: z.number().int().meta({ description: "Unix seconds, UTC." }),
      end_time: z.number().int().meta({ description: "Unix seconds, excluded." }),
      results: z.array(
        z.union([
          z.looseObject({
            object: z.literal("usage.jobs.result"),
            model: nullable(z.string()),
            status: nullable(z.enum(FINAL_JOB_STATUSES)),
            jobs: z.number().int(),
            input_tokens: z.number().int(),
            output_tokens: z.number().int(),
            cost: z.looseObject({ currency: z.literal("USD"), amount: z.number() }),
            ttft_ms: percentiles,
            tokens_per_second: percentiles,
          }),
          z.looseObject({
            object: z.literal("usage.reels.result"),
            account_id: nullable(z.string()),
            published: z.number().int(),
            failed: z.number().int(),
            cancelled: z.number().int(),
            submit_to_live_ms: percentiles,
          }),
        ]),
      ),
    }),
  ),
  has_more: z.boolean(),
  next_page: z.null(),
});

/** Request and response schemas by the name they have under `components.schemas`. */
export const SCHEMAS = {
  Problem: problem,
  /** At the default prompt limit; the document uses the deployment's. */
  JobCommand: commandInputSchema(DEFAULT_MAX_PROMPT_CHARS),
  Job: job,
  JobAccepted: accepted("job_id").extend({ stream_url: z.string() }),
  JobList: z.looseObject({ data: z.array(job), next_cursor: nullable(z.string()), running: tenantLoad }),
  JobStreamMessage: z
    .looseObject({
      delta: z.string(),
      deltas: z.number().int().min(2).optional().meta({
        description: "How many of the model's deltas `delta` joins, when more than one (the worker was behind).",
      }),
      is_final: z.boolean(),
      status: z.enum(JOB_STATUSES).optional(),
      finish_reason: z.enum(FINISH_REASONS).optional(),
      attempt: z.number().int().optional(),
    })
    .meta({ description: "The data of a job stream's `delta` event (its SSE id is the message's seq)." }),
  Model: model,
  ModelList: z.looseObject({ object: z.literal("list"), data: z.array(model) }),
  ResponseCreate: responseRequestSchema,
  Response: responseObject,
  ResponseStreamEvent: z
    .looseObject({
      type: z.string().meta({ example: "response.output_text.delta" }),
      sequence_number: z.number().int(),
    })
    .meta({
      description:
        "One event of a response's stream, in OpenAI's names; `sequence_number` counts from 0 and is what `starting_after` takes.",
    }),
  ResponseDeleted: z.looseObject({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }),
  OpenAIError: z
    .looseObject({
      error: z.looseObject({
        message: z.string(),
        type: z.string(),
        param: nullable(z.string()),
        code: nullable(z.string()),
      }),
    })
    .meta({
      description:
        "OpenAI's error object: every error of /v1/responses and /v1/models, so the OpenAI SDKs raise their typed errors.",
    }),
  PublicationInput: publicationInputSchema,
  PublicationUpdate: publicationUpdateSchema,
  Publication: publication,
  PublicationAccepted: accepted("publication_id"),
  PublicationList: z.looseObject({ data: z.array(publication), next_cursor: nullable(z.string()) }),
  PublicationEvent: z
    .looseObject({
      seq: z.number().int(),
      kind: z.enum(["step", "poll"]),
      status: z.enum(PUBLICATION_STATUSES),
      changes: z.looseObject({}).optional(),
    })
    .meta({
      description:
        "The data of a reel event stream's event: one step or poll of the timeline, with the status after it.",
    }),
  AccountInput: connectAccountSchema,
  Account: account,
  AccountList: z.looseObject({ data: z.array(account) }),
  ReelInsights: reelInsights,
  AccountInsightsList: z.looseObject({
    data: z.array(reelInsights.extend({ caption: z.string(), permalink: nullable(z.string()) })),
  }),
  PostList: z.looseObject({ data: z.array(z.looseObject({ id: z.string() })) }),
  SignIn: signInSchema,
  WebhookInput: webhookInputSchema({ allowPrivate: false }),
  Webhook: webhook,
  WebhookCreated: webhook.extend({ secret: z.string().meta({ description: "whsec_…: shown here only, once." }) }),
  WebhookList: z.looseObject({ data: z.array(webhook) }),
  DeliveryList: z.looseObject({
    data: z.array(
      z.looseObject({
        id: z.string(),
        event_type: z.enum(WEBHOOK_EVENT_TYPES),
        attempt: z.number().int(),
        status_code: nullable(z.number().int()),
        attempted_at: isoTime,
        delivered_at: nullable(isoTime),
        next_attempt_at: nullable(isoTime),
        error: z.string().optional(),
      }),
    ),
  }),
  DeliveryResent: z.looseObject({ id: z.string(), status: z.literal("pending") }),
  Upload: z.looseObject({ upload_id: z.string(), size: z.number().int() }),
  UsagePage: usagePage,
  Session: z.looseObject({ tenant_id: z.string() }),
  Health: z.looseObject({ status: z.enum(["ok", "unavailable"]), failing: z.array(z.string()) }),
  Live: z.looseObject({ status: z.literal("ok") }),
  Ready: z.looseObject({ status: z.literal("ready") }),
  SystemStatus: z.looseObject({ health: z.looseObject({}), generated_at: isoTime }),
} satisfies Record<string, z.ZodType>;

export type SchemaName = keyof typeof SCHEMAS;

/** A request body's schema as clients send it (defaults optional); a response's as the server writes it. */
export const SCHEMA_IO: Partial<Record<SchemaName, "input">> = {
  JobCommand: "input",
  ResponseCreate: "input",
  PublicationInput: "input",
  PublicationUpdate: "input",
  SignIn: "input",
  WebhookInput: "input",
};
