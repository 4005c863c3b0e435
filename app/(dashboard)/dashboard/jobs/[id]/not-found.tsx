import { NotFoundPanel } from "@/components/not-found-panel";

export default function JobNotFound() {
  return (
    <NotFoundPanel title="No such job" back={{ href: "/dashboard/jobs", label: "Back to jobs" }}>
      It may have expired (jobs are kept for 24 hours), be mistyped, or belong to another tenant.
    </NotFoundPanel>
  );
}
