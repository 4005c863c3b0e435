import type { JobStatus } from "@/lib/jobs/status";
import { Badge, type Tone } from "../ui/badge";

const TONE: Record<JobStatus, Tone> = {
  QUEUED: "neutral",
  RUNNING: "info",
  COMPLETED: "success",
  FAILED: "danger",
  CANCELLED: "warning",
};

export function JobStatusBadge({ status }: { status: JobStatus }) {
  return (
    <Badge tone={TONE[status]} live={status === "RUNNING"} data-testid="job-status">
      {status}
    </Badge>
  );
}
