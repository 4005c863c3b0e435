import type { FinishReason } from "@/lib/jobs/status";

/** Why a job stopped, as the job page says it. */
export const FINISH_LABEL: Record<FinishReason, string> = {
  stop: "Stopped: end of text",
  length: "Reached max tokens",
  cancelled: "Cancelled",
  error: "Failed",
};
