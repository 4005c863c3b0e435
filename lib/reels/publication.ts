import type { GraphFailureView } from "../graph/failure-view";
import type { PublicationStatus } from "./status";
import type { TrialParams, UserTag } from "../graph/reel-parameters";

/**
 * A publication as clients see it: the view the API answers with and the timeline events its
 * stream sends. Types and constants only, so the dashboard imports it (values too) and keeps no copy.
 */

/** Why a publication failed: a Graph failure as clients read it (lib/graph/failure-view.ts). */
export type PublicationError = GraphFailureView;

export interface PollRecord {
  attempt: number;
  at: string;
  status_code: string | null;
  status: string | null;
}

export interface StepRecord {
  at: string;
  step: string;
  detail: string;
}

/** Why a SCHEDULED publication waits when its owner did not schedule it: Graph's quota, a refused token, a rate limit. */
export const SCHEDULED_REASONS = ["quota", "needs_reconnect", "rate_limited"] as const;
export type ScheduledReason = (typeof SCHEDULED_REASONS)[number];

/** Fields of the view an event changed, so a stream client need not fetch the publication again. */
export interface PublicationChanges {
  /** null: a retry let go of the container that failed. */
  container_id?: string | null;
  publish_at?: string | null;
  scheduled_reason?: ScheduledReason | null;
  last_status_code?: string;
  post_id?: string;
  permalink?: string | null;
  error?: PublicationError | null;
  warnings?: string[];
}

/** One timeline entry, as stored and as streamed; `status` is the publication's status after it. */
export type PublicationEvent =
  | { seq: number; kind: "step"; status: PublicationStatus; step: StepRecord; changes?: PublicationChanges }
  | { seq: number; kind: "poll"; status: PublicationStatus; poll: PollRecord; changes?: PublicationChanges };

export interface PublicationView {
  publication_id: string;
  tenant_id: string;
  account_id: string;
  /** The video's URL, or null when it was uploaded (upload_id). */
  video_url: string | null;
  /** The upload (POST /api/uploads) published through Graph's resumable upload; null for a video_url. */
  upload_id: string | null;
  caption: string;
  share_to_feed: boolean;
  /** The further reel parameters as submitted (null or empty: not given); Graph ignores thumb_offset when there is a cover_url. */
  cover_url: string | null;
  /** Milliseconds into the video: the frame that becomes the cover. */
  thumb_offset: number | null;
  audio_name: string | null;
  collaborators: string[];
  location_id: string | null;
  user_tags: UserTag[];
  trial_params: TrialParams | null;
  publish_at: string | null;
  status: PublicationStatus;
  /** Set while SCHEDULED by Dispatch rather than by the client: what it waits for (publish_at: when it is tried again, if known). */
  scheduled_reason: ScheduledReason | null;
  container_id: string | null;
  last_status_code: string | null;
  /** Each with its event's seq: the timeline's order (times can tie within a millisecond). */
  polls: (PollRecord & { seq: number })[];
  steps: (StepRecord & { seq: number })[];
  post_id: string | null;
  permalink: string | null;
  error: PublicationError | null;
  /** What the preflight found that Graph accepts but advises against (bitrate, moov at the end, audio rate). */
  warnings: string[];
  created_at: string;
  updated_at: string;
}

/** The SSE event names of a publication's stream: one per kind of timeline entry (`event: step` or `event: poll`). */
export const PUBLICATION_EVENT_KINDS = ["step", "poll"] as const satisfies readonly PublicationEvent["kind"][];
