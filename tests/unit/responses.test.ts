import { describe, expect, it } from "vitest";
import { ApiError, validationError } from "@/lib/errors";
import type { JobView } from "@/lib/jobs/read-job";
import { ResponseEventSequence } from "@/lib/responses/event-sequence";
import { toOpenAIError } from "@/lib/responses/errors";
import { jobIdOf, messageIdOf, responseIdOf } from "@/lib/responses/ids";
import { PLAIN_JOB_FIELDS, promptOf, responseRequestSchema, toCommandInput } from "@/lib/responses/request";
import { toResponseObject } from "@/lib/responses/response-object";
import { RESPONSE_EVENT_ORDER } from "../helpers";

const JOB_ID = "0b0e7a39-5b1c-4c1d-9a57-3b2a7d1e0f00";

const job = (over: Partial<JobView> = {}): JobView => ({
  job_id: JOB_ID,
  tenant_id: "acme",
  model_name: "local-ngram",
  status: "QUEUED",
  finish_reason: null,
  prompt: "hello",
  temperature: 1,
  max_tokens: 2048,
  output: "",
  usage: null,
  cost: null,
  cost_note: null,
  created_at: "2026-01-01T12:00:00.000Z",
  started_at: null,
  completed_at: null,
  ttft_ms: null,
  tokens_per_second: null,
  attempts: 0,
  error: null,
  stream_url: `/jobs/${JOB_ID}/stream`,
  ...over,
});

const parse = (body: Record<string, unknown>) =>
  responseRequestSchema.safeParse({ model: "local-ngram", input: "hello", ...body });
const issuesOf = (body: Record<string, unknown>) => {
  const result = parse(body);
  return result.success ? [] : result.error.issues.map((i) => [i.path.join("."), i.message]);
};

describe("response ids", () => {
  it("are the job's id in OpenAI's form, both ways; anything else is 404", () => {
    expect(responseIdOf(JOB_ID)).toBe("resp_0b0e7a395b1c4c1d9a573b2a7d1e0f00");
    expect(jobIdOf(responseIdOf(JOB_ID))).toBe(JOB_ID);
    expect(messageIdOf(JOB_ID)).toBe("msg_0b0e7a395b1c4c1d9a573b2a7d1e0f00");
    for (const bad of ["resp_123", JOB_ID, "resp_0b0e7a395b1c4c1d9a573b2a7d1e0f00x"])
      expect(() => jobIdOf(bad)).toThrow(expect.objectContaining({ status: 404 }));
  });
});

describe("the request", () => {
  it("takes a string or messages, and makes the prompt: a lone user message is its text, a conversation one labelled paragraph each", () => {
    const plain = responseRequestSchema.parse({ model: "m", input: "Tell me about the log" });
    expect(promptOf(plain)).toBe("Tell me about the log");
    expect(promptOf({ ...plain, instructions: "Be brief." })).toBe("Be brief.\n\nTell me about the log");
    const conversation = responseRequestSchema.parse({
      model: "m",
      input: [
        { role: "developer", content: "Use the docs." },
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "What keeps " },
            { type: "input_text", text: "the log?" },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "output_text", text: "Kafka.", annotations: [] }],
          id: "msg_1",
          status: "completed",
        },
      ],
    });
    expect(promptOf(conversation)).toBe("Developer: Use the docs.\n\nUser: What keeps the log?\n\nAssistant: Kafka.");
  });

  it("accepts the defaults of what Dispatch cannot do, and refuses anything else by name", () => {
    expect(
      issuesOf({
        tools: [],
        tool_choice: "auto",
        text: { format: { type: "text" } },
        truncation: "disabled",
        top_p: 1,
        reasoning: null,
      }),
    ).toEqual([]);
    expect(issuesOf({ tools: [{ type: "web_search" }] })).toEqual([
      ["tools", expect.stringContaining("Dispatch does not support 'tools'")],
    ]);
    expect(issuesOf({ previous_response_id: "resp_1" })).toEqual([
      ["previous_response_id", expect.stringContaining("'previous_response_id'")],
    ]);
    expect(issuesOf({ text: { format: { type: "json_schema" } } })).toEqual([
      ["text", expect.stringContaining("'text'")],
    ]);
    expect(issuesOf({ frequency: 1 })).toEqual([["", expect.any(String)]]);
  });

  it("refuses what OpenAI refuses: store false, metadata over 16 pairs, fewer than 16 output tokens, non-text content", () => {
    expect(issuesOf({ store: false, background: true })).toEqual([
      ["store", "Background responses must be stored: store cannot be false with background: true"],
    ]);
    expect(issuesOf({ store: false })).toEqual([["store", expect.stringContaining("24 h")]]);
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expect(issuesOf({ metadata })).toEqual([["metadata", "metadata has at most 16 pairs"]]);
    expect(issuesOf({ max_output_tokens: 15 })).toHaveLength(1);
    expect(issuesOf({ input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] })[0]).toEqual([
      "input.0.content.0.type",
      expect.stringContaining("input_image"),
    ]);
    expect(issuesOf({ input: [{ type: "function_call_output", role: "user", content: "x" }] })[0][0]).toBe(
      "input.0.type",
    );
    expect(issuesOf({ input: [] })).toEqual([["input", "input is required"]]);
  });

  it("becomes the command with OpenAI's defaults, checked by the command's own limits at the request's names", () => {
    const request = responseRequestSchema.parse({ model: "local-ngram", input: "hello" });
    expect(toCommandInput(request, "acme", 100)).toEqual({
      tenant_id: "acme",
      model_name: "local-ngram",
      prompt: "hello",
      temperature: 1,
      max_tokens: 2048,
    });
    const long = responseRequestSchema.parse({ model: "local-ngram", input: "x".repeat(101) });
    const error = (() => {
      try {
        toCommandInput(long, "acme", 100);
      } catch (e) {
        return e as ApiError;
      }
    })();
    expect(error?.errors).toEqual([{ path: "input", message: "Prompt is at most 100 characters" }]);
  });
});

describe("OpenAI's error shape", () => {
  it.each<[string, unknown, number, Record<string, unknown>]>([
    [
      "a schema failure is a 400 naming the first parameter",
      validationError([{ path: "input.0.content.1.type", message: "no" }]),
      400,
      {
        type: "invalid_request_error",
        param: "input[0].content[1].type",
        message: "Invalid 'input[0].content[1].type': no",
      },
    ],
    [
      "an unknown key is a 401 invalid_api_key",
      new ApiError("unauthorized", "The API key is missing or not valid."),
      401,
      { type: "invalid_request_error", code: "invalid_api_key", param: null },
    ],
    [
      "an unknown id is a 404",
      new ApiError("not-found", "Response with id 'resp_x' not found."),
      404,
      { message: "Response with id 'resp_x' not found.", code: null },
    ],
    [
      "a rate limit is a 429 of type requests",
      new ApiError("rate-limited", "slow down", undefined, { "Retry-After": "3" }),
      429,
      { type: "requests", code: "rate_limit_exceeded" },
    ],
    ["Redis away is a 503", new ApiError("unavailable", "away"), 503, { type: "server_error" }],
    [
      "anything else is a 500 that hides what happened",
      new Error("secret detail"),
      500,
      { type: "server_error", message: "Something went wrong on our side." },
    ],
  ])("%s", (_name, error, status, fields) => {
    const answer = toOpenAIError(error);
    expect(answer.status).toBe(status);
    expect(answer.body.error).toMatchObject(fields);
    expect(Object.keys(answer.body.error).sort()).toEqual(["code", "message", "param", "type"]);
    if (status === 429) expect(answer.headers).toEqual({ "Retry-After": "3" });
  });
});

describe("the Response object", () => {
  it("maps the job's status: max_tokens reached is incomplete with its reason, a failure carries the error", () => {
    const queued = toResponseObject(job(), PLAIN_JOB_FIELDS);
    expect(queued).toMatchObject({
      id: responseIdOf(JOB_ID),
      object: "response",
      status: "queued",
      created_at: 1767268800,
      output: [],
      usage: null,
      completed_at: null,
    });
    expect(queued).not.toHaveProperty("output_text");
    expect(toResponseObject(job({ status: "RUNNING", output: "Kaf" }), PLAIN_JOB_FIELDS).output).toEqual([
      expect.objectContaining({ status: "in_progress", content: [expect.objectContaining({ text: "Kaf" })] }),
    ]);
    const usage = { prompt_tokens: 3, completion_tokens: 16, total_tokens: 19 };
    const cut = toResponseObject(
      job({
        status: "COMPLETED",
        finish_reason: "length",
        output: "Kafka",
        usage,
        completed_at: "2026-01-01T12:00:05.000Z",
      }),
      PLAIN_JOB_FIELDS,
    );
    expect(cut).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      completed_at: null,
      usage: { input_tokens: 3, output_tokens: 16, total_tokens: 19 },
    });
    expect(cut.output[0].status).toBe("incomplete");
    const done = toResponseObject(
      job({ status: "COMPLETED", finish_reason: "stop", output: "", completed_at: "2026-01-01T12:00:05.000Z" }),
      PLAIN_JOB_FIELDS,
    );
    expect(done).toMatchObject({
      status: "completed",
      completed_at: 1767268805,
      output: [expect.objectContaining({ status: "completed", content: [expect.objectContaining({ text: "" })] })],
    });
    expect(
      toResponseObject(
        job({ status: "FAILED", finish_reason: "error", error: "the model failed: boom" }),
        PLAIN_JOB_FIELDS,
      ),
    ).toMatchObject({
      status: "failed",
      error: { code: "server_error", message: "the model failed: boom" },
      output: [],
    });
    expect(toResponseObject(job({ status: "CANCELLED", finish_reason: "cancelled" }), PLAIN_JOB_FIELDS).status).toBe(
      "cancelled",
    );
  });
});

describe("the event sequence", () => {
  const accepted = toResponseObject(job(), PLAIN_JOB_FIELDS);
  const ended = (over: Partial<JobView>) => toResponseObject(job(over), PLAIN_JOB_FIELDS);
  const run = (steps: (s: ResponseEventSequence) => unknown[][]) => {
    const sequence = new ResponseEventSequence(messageIdOf(JOB_ID), accepted);
    return steps(sequence).flat() as { type: string; sequence_number: number; output_index?: number; text?: string }[];
  };

  it("goes created, queued, in_progress, item, part, deltas, done events and the end, numbered from 0", () => {
    const events = run((s) => [
      s.start(),
      s.delta("Kaf"),
      s.delta("ka"),
      s.finish(ended({ status: "COMPLETED", finish_reason: "stop", output: "Kafka" })),
    ]);
    // Two deltas, so the order's one delta appears twice.
    expect(events.map((e) => e.type)).toEqual([
      ...RESPONSE_EVENT_ORDER.slice(0, 6),
      ...RESPONSE_EVENT_ORDER.slice(5),
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.find((e) => e.type === "response.output_text.done")!.text).toBe("Kafka");
  });

  it("numbers a prefix of the messages as a prefix of the events: what lets starting_after resume", () => {
    const whole = run((s) => [
      s.start(),
      s.delta("a"),
      s.delta("b"),
      s.delta("c"),
      s.finish(ended({ status: "COMPLETED", finish_reason: "length", output: "abc" })),
    ]);
    const prefix = run((s) => [s.start(), s.delta("a"), s.delta("b")]);
    expect(whole.slice(0, prefix.length)).toEqual(prefix);
    expect(whole.at(-1)!.type).toBe("response.incomplete");
  });

  it("ends a response cancelled or failed before any text without a message, and one cancelled mid-text with its message incomplete", () => {
    expect(
      run((s) => [s.start(), s.finish(ended({ status: "CANCELLED", finish_reason: "cancelled" }))]).map((e) => e.type),
    ).toEqual(["response.created", "response.queued", "response.cancelled"]);
    expect(run((s) => [s.start(), s.finish(ended({ status: "FAILED", finish_reason: "error" }))]).at(-1)!.type).toBe(
      "response.failed",
    );
    const cut = run((s) => [
      s.start(),
      s.delta("Ka"),
      s.finish(ended({ status: "CANCELLED", finish_reason: "cancelled", output: "Ka" })),
    ]);
    expect(cut.slice(-2)).toEqual([
      expect.objectContaining({
        type: "response.output_item.done",
        item: expect.objectContaining({ status: "incomplete" }),
      }),
      expect.objectContaining({ type: "response.cancelled" }),
    ]);
  });

  it("closes the text of an attempt that started over and puts the new attempt's at the next output index", () => {
    const events = run((s) => [
      s.start(),
      s.delta("old"),
      s.reset(),
      s.delta("new"),
      s.finish(ended({ status: "COMPLETED", finish_reason: "stop", output: "new" })),
    ]);
    expect(events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index)).toEqual([0, 1]);
    expect(events.filter((e) => e.type === "response.output_text.done").map((e) => [e.output_index, e.text])).toEqual([
      [0, "old"],
      [1, "new"],
    ]);
    expect(events.filter((e) => e.type === "response.in_progress")).toHaveLength(1);
  });
});
