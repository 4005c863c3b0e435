import type { PublicationView } from "@/lib/reels/publication";
import { Detail } from "./detail";

const TRIAL_STRATEGIES = {
  MANUAL: "graduated from the Instagram app",
  SS_PERFORMANCE: "graduates when it performs well",
};

/** The further reel parameters a publication was submitted with; nothing for those left out. */
export function ReelParameterDetails({ view }: { view: PublicationView }) {
  const handles = (names: string[]) => names.map((name) => `@${name}`).join(", ");
  return (
    <>
      {view.cover_url ? (
        <Detail
          label="Cover"
          value={
            <span className="font-mono text-xs break-all" data-testid="reel-cover">
              {view.cover_url}
            </span>
          }
        />
      ) : view.thumb_offset !== null ? (
        <Detail
          label="Cover"
          value={<span data-testid="reel-cover">Frame at {(view.thumb_offset / 1000).toFixed(1)} s</span>}
        />
      ) : null}
      {view.audio_name && <Detail label="Audio" value={view.audio_name} />}
      {view.collaborators.length > 0 && (
        <Detail
          label="Collaborators"
          value={<span data-testid="reel-collaborators">{handles(view.collaborators)}</span>}
        />
      )}
      {view.user_tags.length > 0 && (
        <Detail label="Tagged" value={handles(view.user_tags.map((tag) => tag.username))} />
      )}
      {view.location_id && <Detail label="Location" value={<span className="font-mono">{view.location_id}</span>} />}
      {view.trial_params && (
        <Detail
          label="Trial reel"
          value={`Yes: ${TRIAL_STRATEGIES[view.trial_params.graduation_strategy]} (${view.trial_params.graduation_strategy})`}
        />
      )}
    </>
  );
}
