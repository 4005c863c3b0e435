import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { PublishReelForm } from "@/components/reels/publish-reel-form";
import { PublishedReels } from "@/components/reels/published-reels";
import { RecentPublications } from "@/components/reels/recent-publications";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { getConfig } from "@/lib/config";

export const metadata: Metadata = { title: "Reels" };

export default function ReelsPage() {
  return (
    <>
      <PageHeader
        title="Reels"
        description="Publish a video as a reel: a container is created from its URL, polled until processing is done, then published. It runs on the server; you can close this tab."
      />
      <div className="space-y-6">
        <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
          <Card>
            <CardHeader title="New reel" />
            <CardBody>
              <PublishReelForm uploadMaxBytes={getConfig().UPLOAD_MAX_BYTES} />
            </CardBody>
          </Card>
          <RecentPublications />
        </div>
        <PublishedReels />
      </div>
    </>
  );
}
