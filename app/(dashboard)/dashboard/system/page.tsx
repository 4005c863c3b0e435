import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { SystemStatusView } from "@/components/system/system-status";

export const metadata: Metadata = { title: "System" };

export default function SystemPage() {
  return (
    <>
      <PageHeader
        title="System"
        description="Redis, the Kafka broker, the workers and how far behind they are — refreshed live."
      />
      <SystemStatusView />
    </>
  );
}
