import { z } from "zod";
import { ApiError } from "../errors";

const responseIdSchema = z.string().regex(/^resp_[0-9a-f]{32}$/i);

/**
 * A response is a job: its id is the job's UUID in OpenAI's form (`resp_` and 32 hex digits), so
 * either id finds the other without a lookup table.
 */
export function responseIdOf(jobId: string): string {
  return `resp_${jobId.replaceAll("-", "")}`;
}

/** The assistant message of a response: one per job, so its id comes from the job's too. */
export function messageIdOf(jobId: string): string {
  return `msg_${jobId.replaceAll("-", "")}`;
}

/** The job behind a response id; anything that is not one is 404, as an unknown id is. */
export function jobIdOf(responseId: string): string {
  if (!responseIdSchema.safeParse(responseId).success) throw responseNotFound(responseId);
  const hex = responseId.slice("resp_".length).toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const responseNotFound = (responseId: string) =>
  new ApiError("not-found", `Response with id '${responseId}' not found.`);
