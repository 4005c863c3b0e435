import { z } from "zod";
import { ApiError } from "../errors";
import { commandInputSchema, type CommandInput } from "../jobs/command";
import { MAX_TOKENS, TEMPERATURE } from "../jobs/status";

/**
 * POST /v1/responses as OpenAI's Responses API takes it, translated into Dispatch's generation
 * command: the messages and instructions become the job's prompt, max_output_tokens its max_tokens.
 * What the command does not carry (instructions, metadata, background…) is kept on the job's
 * record (`ResponseFields`) for the Response object.
 */

/** OpenAI's defaults where the request leaves a field out: temperature 1, and Dispatch's max tokens. */
export const RESPONSE_DEFAULTS = { temperature: 1, maxOutputTokens: MAX_TOKENS.default } as const;
/** OpenAI refuses fewer than 16 output tokens. */
const MIN_OUTPUT_TOKENS = 16;

const ROLES = ["user", "system", "developer", "assistant"] as const;
type Role = (typeof ROLES)[number];

const contentPart = z.looseObject({
  type: z.enum(["input_text", "output_text"], {
    error: (issue) =>
      `Dispatch's models take text only: content of type ${JSON.stringify(issue.input)} is not supported`,
  }),
  text: z.string({ error: "text must be a string" }),
});

const inputMessage = z.strictObject({
  type: z
    .literal("message", {
      error: (issue) => `Only input messages are supported, not items of type ${JSON.stringify(issue.input)}`,
    })
    .optional(),
  role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(", ")}` }),
  // A string is one input_text part: one shape from here on.
  content: z.preprocess(
    (v) => (typeof v === "string" ? [{ type: "input_text", text: v }] : v),
    z.array(contentPart, { error: "content must be a string or a list of input_text parts" }),
  ),
  id: z.string().optional(),
  status: z.string().optional(),
});

/**
 * Parameters of OpenAI's API that Dispatch cannot honour, with the value each may have that
 * changes nothing (its default). Anything else is refused by name, never silently ignored.
 */
const UNSUPPORTED: Record<string, (value: unknown) => boolean> = {
  tools: (v) => Array.isArray(v) && v.length === 0,
  tool_choice: (v) => v === "none" || v === "auto",
  parallel_tool_calls: (v) => typeof v === "boolean",
  max_tool_calls: () => false,
  reasoning: () => false,
  text: (v) => JSON.stringify(v) === JSON.stringify({ format: { type: "text" } }),
  previous_response_id: () => false,
  conversation: () => false,
  include: (v) => Array.isArray(v) && v.length === 0,
  prompt: () => false,
  top_p: (v) => v === 1,
  top_logprobs: (v) => v === 0,
  truncation: (v) => v === "disabled",
  service_tier: (v) => v === "auto" || v === "default",
  user: () => false,
  safety_identifier: () => false,
  prompt_cache_key: () => false,
  prompt_cache_retention: () => false,
  prompt_cache_options: () => false,
  stream_options: () => false,
  context_management: () => false,
  moderation: () => false,
};

const unsupported = Object.fromEntries(
  Object.entries(UNSUPPORTED).map(([name, isDefault]) => [
    name,
    z
      .unknown()
      .refine(
        (v) => v === null || isDefault(v),
        `Dispatch does not support '${name}' (its jobs generate plain text from a prompt); leave it out`,
      )
      .optional(),
  ]),
);

const metadata = z
  .record(
    z.string().max(64, "metadata keys are at most 64 characters"),
    z.string({ error: "metadata values must be strings" }).max(512, "metadata values are at most 512 characters"),
  )
  .refine((m) => Object.keys(m).length <= 16, "metadata has at most 16 pairs");

export const responseRequestSchema = z
  .strictObject({
    model: z.string({ error: "model is required" }).min(1, "model is required"),
    input: z.preprocess(
      (v) => (typeof v === "string" ? [{ role: "user", content: v }] : v),
      z.array(inputMessage, { error: "input must be a string or a list of messages" }).min(1, "input is required"),
    ),
    instructions: z.string().nullish(),
    temperature: z.number().min(TEMPERATURE.min).max(TEMPERATURE.max).nullish(),
    max_output_tokens: z.number().int().min(MIN_OUTPUT_TOKENS).max(MAX_TOKENS.max).nullish(),
    metadata: metadata.nullish(),
    background: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    store: z.boolean().nullish(),
    ...unsupported,
  })
  // Every Dispatch job is kept 24 h: a response that must not be stored cannot be one.
  .superRefine((r, ctx) => {
    if (r.store !== false) return;
    const message = r.background
      ? "Background responses must be stored: store cannot be false with background: true"
      : "Dispatch keeps every response for 24 h: store cannot be false";
    ctx.addIssue({ code: "custom", path: ["store"], message });
  });

export type ResponseRequest = z.infer<typeof responseRequestSchema>;

/** What the Response object echoes that the generation command does not carry: kept on the job's record as JSON. */
export const responseFieldsSchema = z.object({
  instructions: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  background: z.boolean(),
  max_output_tokens: z.number().nullable(),
});
export type ResponseFields = z.infer<typeof responseFieldsSchema>;

/** A job that did not come through this surface (POST /v1/jobs) reads as a background response with no extras. */
export const PLAIN_JOB_FIELDS: ResponseFields = {
  instructions: null,
  metadata: {},
  background: true,
  max_output_tokens: null,
};

export function parseResponseFields(raw: string | null | undefined): ResponseFields {
  if (!raw) return PLAIN_JOB_FIELDS;
  try {
    return responseFieldsSchema.parse(JSON.parse(raw));
  } catch {
    return PLAIN_JOB_FIELDS;
  }
}

const LABELS: Record<Role, string> = { user: "User", system: "System", developer: "Developer", assistant: "Assistant" };

/**
 * The prompt the model sees: the instructions, then the messages. A lone user message is its text;
 * a conversation is one labelled paragraph per message ("User: …", "Assistant: …"), since a job's
 * command carries one prompt, not a list of messages.
 */
export function promptOf(request: Pick<ResponseRequest, "instructions" | "input">): string {
  const lone = request.input.length === 1 && request.input[0].role === "user";
  const messages = request.input.map((m) => {
    const text = m.content.map((part) => part.text).join("");
    return lone ? text : `${LABELS[m.role]}: ${text}`;
  });
  return [request.instructions, ...messages].filter((part): part is string => !!part).join("\n\n");
}

/** The command's fields and OpenAI's names for them, so a limit the command sets is reported at the parameter the client sent. */
const PARAM_OF: Record<string, string> = {
  prompt: "input",
  model_name: "model",
  max_tokens: "max_output_tokens",
  temperature: "temperature",
};

/**
 * The request as Dispatch's generation command for `tenantId`, checked by the command's own
 * schema (the prompt limit, the ranges); a failure is a 400 naming the request's parameter.
 */
export function toCommandInput(request: ResponseRequest, tenantId: string, maxPromptChars: number): CommandInput {
  const parsed = commandInputSchema(maxPromptChars).safeParse({
    tenant_id: tenantId,
    model_name: request.model,
    prompt: promptOf(request),
    temperature: request.temperature ?? RESPONSE_DEFAULTS.temperature,
    max_tokens: request.max_output_tokens ?? RESPONSE_DEFAULTS.maxOutputTokens,
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue.path[0] ?? "");
  throw new ApiError("bad-request", issue.message, [{ path: PARAM_OF[field] ?? field, message: issue.message }]);
}

export function responseFieldsOf(request: ResponseRequest): ResponseFields {
  return {
    instructions: request.instructions ?? null,
    metadata: request.metadata ?? {},
    background: request.background ?? false,
    max_output_tokens: request.max_output_tokens ?? null,
  };
}
