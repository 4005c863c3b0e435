import { z } from "zod";
import { ApiError } from "../errors";

const jobIdSchema = z.string().uuid();

/** A path id that is not a UUID names no job: 404, the same answer as an unknown one. */
export function parseJobId(id: string): string {
  if (!jobIdSchema.safeParse(id).success) throw new ApiError("not-found", "No such job.");
  return id.toLowerCase();
}

export const jobNotFound = () => new ApiError("not-found", "No such job.");

/** Where a stream client resumes: `Last-Event-ID` (a reconnecting EventSource) or `?after=`. */
export function parseResumePoint(request: Request): number {
  const raw = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("after") ?? "0";
  if (!/^\d{1,9}$/.test(raw.trim())) {
    throw new ApiError("validation", "The request does not match the schema.", [{ path: "after", message: "must be a non-negative integer (a seq)" }]);
  }
  return Number(raw);
}
