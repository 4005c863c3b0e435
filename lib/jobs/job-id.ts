import { z } from "zod";
import { ApiError } from "../errors";

const jobIdSchema = z.string().uuid();

/** A path id that is not a UUID names no job: 404, the same answer as an unknown one. */
export function parseJobId(id: string): string {
  if (!jobIdSchema.safeParse(id).success) throw new ApiError("not-found", "No such job.");
  return id.toLowerCase();
}

export const jobNotFound = () => new ApiError("not-found", "No such job.");
