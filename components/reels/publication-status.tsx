import type { PublicationStatus } from "@/lib/reels/publication";
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
};

/** Nothing more happens without someone acting (TIMED_OUT can be resumed). */
export const isSettledStatus = (status: PublicationStatus) => status === "PUBLISHED" || status === "FAILED" || status === "TIMED_OUT";

export function PublicationStatusBadge({ status }: { status: PublicationStatus }) {
  const moving = status === "CREATING" || status === "PROCESSING" || status === "PUBLISHING";
  return (
    <Badge tone={TONE[status]} live={moving} data-testid="publication-status">
      {status.replace("_", " ")}
    </Badge>
  );
}
