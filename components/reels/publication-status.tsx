import type { PublicationStatus } from "@/lib/reels/status";
import { Badge, type Tone } from "../ui/badge";

const TONE: Record<PublicationStatus, Tone> = {
  SCHEDULED: "neutral",
  QUEUED: "neutral",
  CREATING: "info",
  PROCESSING: "info",
  PUBLISHING: "info",
  PUBLISHED: "success",
  FAILED: "danger",
  TIMED_OUT: "warning",
  CANCELLED: "neutral",
};

export function PublicationStatusBadge({ status }: { status: PublicationStatus }) {
  const moving = status === "CREATING" || status === "PROCESSING" || status === "PUBLISHING";
  return (
    <Badge tone={TONE[status]} live={moving} data-testid="publication-status">
      {status.replace("_", " ")}
    </Badge>
  );
}
