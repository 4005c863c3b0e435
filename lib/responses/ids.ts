import { ApiError } from "../errors";

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
  const hex = /^resp_([0-9a-f]{32})$/i.exec(responseId)?.[1]?.toLowerCase();
  if (!hex) throw responseNotFound(responseId);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const responseNotFound = (responseId: string) => new ApiError("not-found", `Response with id '${responseId}' not found.`);
