import { NotFoundPanel } from "@/components/not-found-panel";

export default function PublicationNotFound() {
  return (
    <NotFoundPanel title="No such publication" back={{ href: "/dashboard/reels", label: "Back to reels" }}>
      The link may be mistyped, or the publication may have expired or belong to another tenant.
    </NotFoundPanel>
  );
}
