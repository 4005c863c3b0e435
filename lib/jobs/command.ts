import { randomUUID } from "node:crypto";
import { z } from "zod";
import { tenantIdSchema } from "../tenant-id";
import { DEFAULT_MAX_PROMPT_CHARS, MAX_TOKENS, TEMPERATURE } from "./status";


const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, "must be a canonical lowercase UUID");


const isoUtc = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, "must be an ISO 8601 UTC time like 2026-01-01T12:00:00Z")
  .refine((s) => !Number.isNaN(Date.parse(s)), "is not a real date");

const schemas = new Map<number, ReturnType<typeof buildCommandInputSchema>>();

/**
 * The generation command as a client sends it: strict, so an unknown field is an error. Built
 * once per prompt limit: zod compiles a schema on first use, which costs more than parsing with it.
 */
export function commandInputSchema(maxPromptChars = DEFAULT_MAX_PROMPT_CHARS) {
  let schema = schemas.get(maxPromptChars);
  if (!schema) schemas.set(maxPromptChars, (schema = buildCommandInputSchema(maxPromptChars)));
  return schema;
}

function buildCommandInputSchema(maxPromptChars: number) {
  return z.strictObject({
    job_id: uuid.optional(),
    tenant_id: tenantIdSchema,
    model_name: z.string().min(1).max(200),
    prompt: z.string().min(1, "must not be empty").max(maxPromptChars, `must be at most ${maxPromptChars} characters`),
    temperature: z.number().min(TEMPERATURE.min).max(TEMPERATURE.max).default(TEMPERATURE.default),
    max_tokens: z.number().int().min(MAX_TOKENS.min).max(MAX_TOKENS.max).default(MAX_TOKENS.default),
    timestamp: isoUtc.optional(),
  });
}

export type CommandInput = z.infer<ReturnType<typeof buildCommandInputSchema>>;

/** The command as it travels on ai.generation.requests: every default filled in. */
export const generationCommandSchema = commandInputSchema(Number.MAX_SAFE_INTEGER).required({ job_id: true, timestamp: true });
export type GenerationCommand = z.infer<typeof generationCommandSchema>;

export function completeCommand(input: CommandInput, now: Date): GenerationCommand {
  return { ...input, job_id: input.job_id ?? randomUUID(), timestamp: input.timestamp ?? now.toISOString() };
}
