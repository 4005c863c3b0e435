import { randomUUID } from "node:crypto";
import { z } from "zod";
import { tenantIdSchema } from "../tenant-id";
import { MAX_TOKENS, TEMPERATURE } from "./status";

/** Messages read as a sentence on their own: the form shows them next to the field, the API in `errors[]`. */
const count = (n: number) => n.toLocaleString("en-US");
const missingOr = (missing: string, wrongType: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? missing : wrongType;
const temperatureRange = `Temperature is between ${TEMPERATURE.min} and ${TEMPERATURE.max}`;
const maxTokensRange = `Max tokens is between ${count(MAX_TOKENS.min)} and ${count(MAX_TOKENS.max)}`;

const uuid = z
  .string({ error: "Job id must be text" })
  .regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    "Job id must be a UUID in lowercase, like 0b0e7a39-5b1c-4c1d-9a57-3b2a7d1e0f00",
  );

const isoUtc = z
  .string({ error: "Timestamp must be text" })
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, "Timestamp must be a UTC time like 2026-01-01T12:00:00Z")
  .refine((s) => !Number.isNaN(Date.parse(s)), "Timestamp is not a real date");

const schemas = new Map<number, ReturnType<typeof buildCommandInputSchema>>();

/**
 * The generation command as a client sends it: strict, so an unknown field is an error. Built
 * once per prompt limit: zod compiles a schema on first use, which costs more than parsing with it.
 */
export function commandInputSchema(maxPromptChars: number) {
  let schema = schemas.get(maxPromptChars);
  if (!schema) schemas.set(maxPromptChars, (schema = buildCommandInputSchema(maxPromptChars)));
  return schema;
}

function buildCommandInputSchema(maxPromptChars: number) {
  return z.strictObject(
    {
      job_id: uuid.optional(),
      tenant_id: tenantIdSchema,
      model_name: z
        .string({ error: missingOr("Choose a model", "Model name must be text") })
        .min(1, "Choose a model")
        .max(200, "Model name is at most 200 characters"),
      prompt: z
        .string({ error: missingOr("Enter a prompt", "Prompt must be text") })
        // Only spaces is no prompt either.
        .regex(/\S/, "Enter a prompt")
        .max(maxPromptChars, `Prompt is at most ${count(maxPromptChars)} characters`),
      temperature: z
        .number({ error: "Temperature must be a number" })
        .min(TEMPERATURE.min, temperatureRange)
        .max(TEMPERATURE.max, temperatureRange)
        .default(TEMPERATURE.default),
      max_tokens: z
        .number({ error: "Max tokens must be a whole number" })
        .int("Max tokens must be a whole number")
        .min(MAX_TOKENS.min, maxTokensRange)
        .max(MAX_TOKENS.max, maxTokensRange)
        .default(MAX_TOKENS.default),
      timestamp: isoUtc.optional(),
    },
    // Unknown fields are reported by zodIssues, one per field; this is for a body that is no object at all.
    {
      error: (issue) =>
        issue.code === "invalid_type" ? "The body must be a JSON object with the command's fields" : undefined,
    },
  );
}

export type CommandInput = z.infer<ReturnType<typeof buildCommandInputSchema>>;

/** The command as it travels on ai.generation.requests: every default filled in. */
export const generationCommandSchema = commandInputSchema(Number.MAX_SAFE_INTEGER).required({
  job_id: true,
  timestamp: true,
});
export type GenerationCommand = z.infer<typeof generationCommandSchema>;

export function completeCommand(input: CommandInput, now: Date): GenerationCommand {
  return { ...input, job_id: input.job_id ?? randomUUID(), timestamp: input.timestamp ?? now.toISOString() };
}
