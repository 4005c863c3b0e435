import type { JobView } from "../jobs/read-job";
import { isFinalJob } from "../jobs/status";
import { messageIdOf, responseIdOf } from "./ids";
import type { ResponseFields } from "./request";

export const RESPONSE_STATUSES = ["queued", "in_progress", "completed", "failed", "cancelled", "incomplete"] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

export interface OutputText {
  type: "output_text";
  text: string;
  annotations: [];
  logprobs: [];
}

export interface OutputMessage {
  id: string;
  type: "message";
  status: "in_progress" | "completed" | "incomplete";
  role: "assistant";
  content: OutputText[];
}

/** OpenAI's Response object. No `output_text`: the SDKs compute it from `output`, as they do for OpenAI's own answers. */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  background: boolean;
  error: { code: "server_error"; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  model: string;
  output: OutputMessage[];
  parallel_tool_calls: false;
  store: true;
  temperature: number;
  text: { format: { type: "text" } };
  tool_choice: "none";
  tools: [];
  top_p: null;
  truncation: "disabled";
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: 0 };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: 0 };
    total_tokens: number;
  } | null;
}

/** A job's status as a Response's: a job that stopped at max_tokens (finish_reason length) is incomplete. */
export function responseStatusOf(job: Pick<JobView, "status" | "finish_reason">): ResponseStatus {
  switch (job.status) {
    case "QUEUED":
      return "queued";
    case "RUNNING":
      return "in_progress";
    case "COMPLETED":
      return job.finish_reason === "length" ? "incomplete" : "completed";
    case "FAILED":
      return "failed";
    case "CANCELLED":
      return "cancelled";
  }
}

export const outputText = (text: string): OutputText => ({ type: "output_text", text, annotations: [], logprobs: [] });

/** The assistant message as it stands: a finished response has one (empty text too), an unfinished one once it has text. */
function outputOf(job: JobView, status: ResponseStatus): OutputMessage[] {
  if (status !== "completed" && status !== "incomplete" && job.output === "") return [];
  const itemStatus = status === "completed" ? "completed" : isFinalJob(job.status) ? "incomplete" : "in_progress";
  return [
    {
      id: messageIdOf(job.job_id),
      type: "message",
      status: itemStatus,
      role: "assistant",
      content: [outputText(job.output)],
    },
  ];
}

const unixSeconds = (iso: string | null) => (iso ? Math.floor(Date.parse(iso) / 1000) : null);

/** The Response object of a job, from its record (`JobView`) and what the request asked beyond the command. */
export function toResponseObject(job: JobView, fields: ResponseFields): ResponseObject {
  const status = responseStatusOf(job);
  return {
    id: responseIdOf(job.job_id),
    object: "response",
    created_at: unixSeconds(job.created_at) ?? 0,
    completed_at: status === "completed" ? unixSeconds(job.completed_at) : null,
    status,
    background: fields.background,
    error: status === "failed" ? { code: "server_error", message: job.error ?? "The generation failed." } : null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: fields.instructions,
    max_output_tokens: fields.max_output_tokens,
    metadata: fields.metadata,
    model: job.model_name,
    output: outputOf(job, status),
    parallel_tool_calls: false,
    store: true,
    temperature: job.temperature,
    text: { format: { type: "text" } },
    tool_choice: "none",
    tools: [],
    top_p: null,
    truncation: "disabled",
    usage: job.usage && {
      input_tokens: job.usage.prompt_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: job.usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: job.usage.total_tokens,
    },
  };
}
