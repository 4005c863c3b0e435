import { z } from "zod";
import packageJson from "../../package.json";
import { SESSION_COOKIE } from "../web/sessions";
import { DEFAULT_MAX_PROMPT_CHARS } from "../config";
import { commandInputSchema } from "../jobs/command";
import { OPERATIONS, type Operation } from "./operations";
import { SCHEMA_IO, SCHEMAS, type SchemaName } from "./schemas";

/**
 * The OpenAPI 3.1 document of Dispatch's public API, built from the operations table and the zod
 * schemas (zod 4's JSON Schema output is draft 2020-12, the dialect OpenAPI 3.1 uses).
 */

type JsonSchema = Record<string, unknown>;

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    target: "draft-2020-12",
  }) as JsonSchema;
  return rest;
}

const problemContent = { "application/problem+json": { schema: ref("Problem") } };
const openAIErrorContent = { "application/json": { schema: ref("OpenAIError") } };

/** The errors every operation of a kind can answer, so the table lists only each one's own. */
function commonErrors(operation: Operation): Record<number, string> {
  const errors: Record<number, string> = {};
  if (operation.auth === "tenant") {
    errors[401] = "No key or session, or an unknown one";
    errors[429] = "Too many requests (the tenant's rate, or failed key checks from this address): see Retry-After";
    errors[503] = "Redis or the broker is unreachable: see Retry-After";
  }
  if (operation.body) {
    errors[400] = "The body is not JSON (or not UTF-8), or nests arrays and objects more than 64 deep";
    errors[413] = "The body is over 1 MiB";
    errors[415] = "The body is not application/json";
    errors[422] = "The body does not match the schema (errors[] names each field)";
  }
  if (operation.query) errors[422] = "The query does not match the schema (errors[] names each parameter)";
  if (operation.path.startsWith("/api/health/ready"))
    errors[503] = "Not ready: errors[] names each part (redis, kafka, workers)";
  if (operation.tag === "Responses" && errors[422]) {
    // OpenAI answers a request that does not match its schema with 400, `param` naming the field.
    errors[400] =
      "The request is not JSON, does not match the schema, or asks for what Dispatch cannot do (`param` names the field)";
    delete errors[422];
  }
  return { ...errors, ...operation.errors };
}

function responseBody(response: Operation["responses"][number]) {
  const events = (name: SchemaName) => ({
    "text/event-stream": {
      schema: { type: "string", description: `Server-sent events; each data line is a ${name} as JSON.` },
    },
  });
  if ("json" in response)
    return {
      content: {
        "application/json": { schema: ref(response.json) },
        ...(response.sse ? events(response.sse) : {}),
        ...(response.csv ? { "text/csv": { schema: { type: "string", description: response.csv } } } : {}),
      },
    };
  if ("sse" in response) return { content: events(response.sse) };
  if ("text" in response) return { content: { [response.text]: { schema: { type: "string" } } } };
  return {};
}

function parameters(operation: Operation) {
  const list: Record<string, unknown>[] = [];
  for (const [name, description] of Object.entries(operation.params ?? {}))
    list.push({ name, in: "path", required: true, description, schema: { type: "string" } });
  if (operation.query) {
    const schema = jsonSchema(operation.query, "input") as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      list.push({ name, in: "query", required: schema.required?.includes(name) ?? false, schema: property });
  }
  for (const [name, description] of Object.entries(operation.headers ?? {}))
    list.push({ name, in: "header", required: false, description, schema: { type: "string" } });
  return list;
}

const SECURITY: Record<Operation["auth"], Record<string, string[]>[]> = {
  tenant: [{ apiKey: [] }, { session: [] }],
  metrics: [{ metricsToken: [] }, {}],
  none: [],
};

function operationObject(operation: Operation) {
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(operation.responses))
    responses[status] = { description: response.description, ...responseBody(response) };
  const errorContent = operation.tag === "Responses" ? openAIErrorContent : problemContent;
  for (const [status, description] of Object.entries(commonErrors(operation)))
    responses[status] ??= { description, content: errorContent };
  const params = parameters(operation);
  return {
    operationId: `${operation.method}${operation.path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...(operation.deprecated ? { deprecated: true } : {}),
    security: SECURITY[operation.auth],
    ...(params.length ? { parameters: params } : {}),
    ...(operation.body
      ? { requestBody: { required: true, content: { "application/json": { schema: ref(operation.body) } } } }
      : {}),
    ...(operation.bytes
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              operation.bytes.map((type) => [
                type,
                type.startsWith("multipart/")
                  ? {
                      schema: {
                        type: "object",
                        properties: { file: { type: "string", contentMediaType: "video/mp4" } },
                      },
                    }
                  : {},
              ]),
            ),
          },
        }
      : {}),
    responses,
  };
}

const TAGS: { name: Operation["tag"]; description: string }[] = [
  { name: "Jobs", description: "Generation jobs: submit, read, stream, cancel." },
  {
    name: "Responses",
    description:
      "OpenAI's Responses API (background mode) over the same jobs, for the OpenAI SDKs: errors in OpenAI's shape.",
  },
  { name: "Reels", description: "Reel publications through the Graph container flow." },
  { name: "Accounts", description: "The tenant's publishing accounts." },
  { name: "Webhooks", description: "Signed deliveries of job and reel events (Standard Webhooks)." },
  { name: "Session", description: "The dashboard's sign-in." },
  { name: "Usage", description: "What the tenant's jobs and reels used and how they did, over time." },
  { name: "Operations", description: "Health, readiness, metrics and this document." },
];

/** The document; the command's prompt limit is the deployment's (MAX_PROMPT_CHARS), as the route validates with it. */
export function buildOpenApiDocument(options: { maxPromptChars?: number; operations?: Operation[] } = {}) {
  const operations = options.operations ?? OPERATIONS;
  const named: Record<SchemaName, z.ZodType> = {
    ...SCHEMAS,
    JobCommand: commandInputSchema(options.maxPromptChars ?? DEFAULT_MAX_PROMPT_CHARS),
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) (paths[operation.path] ??= {})[operation.method] = operationObject(operation);
  const schemas = Object.fromEntries(
    Object.entries(named).map(([name, schema]) => [
      name,
      jsonSchema(schema, SCHEMA_IO[name as SchemaName] ?? "output"),
    ]),
  );
  return {
    openapi: "3.1.1",
    info: {
      title: "Dispatch",
      version: packageJson.version,
      description:
        "Reel publishing and generation jobs. Every call takes `Authorization: Bearer <key>` (or the dashboard's session cookie); errors are `application/problem+json` (those of /v1/responses and /v1/models are in OpenAI's error shape, for the OpenAI SDKs); a method a path does not list answers 405 with an `Allow` header. The sandbox's Graph-compatible surface under `/graph/{version}/…` answers like Meta's Graph API and is documented by Meta, not here.",
    },
    servers: [{ url: "/" }],
    tags: TAGS.filter((tag) => operations.some((o) => o.tag === tag.name)),
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "An API key from API_KEYS; it decides the tenant." },
        session: {
          type: "apiKey",
          in: "cookie",
          name: SESSION_COOKIE,
          description: "The dashboard's session (POST /api/session).",
        },
        metricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN, for GET /metrics." },
      },
    },
  };
}

let built: { maxPromptChars: number; document: ReturnType<typeof buildOpenApiDocument> } | undefined;

/** The document, built once per process. */
export function openApiDocument(maxPromptChars: number) {
  if (built?.maxPromptChars !== maxPromptChars)
    built = { maxPromptChars, document: buildOpenApiDocument({ maxPromptChars }) };
  return built.document;
}
