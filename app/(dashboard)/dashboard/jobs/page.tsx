import type { Metadata } from "next";
import { NewJobForm } from "@/components/jobs/new-job-form";
import { RecentJobs } from "@/components/jobs/recent-jobs";
import { PageHeader } from "@/components/page-header";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { sessionTenant } from "../../../session-tenant";

export const metadata: Metadata = { title: "Jobs" };

export default async function JobsPage() {
  const tenant = (await sessionTenant()) ?? "";
  return (
    <>
      <PageHeader
        title="Generation jobs"
        description="Submit a prompt; a worker picks it up from the log and streams tokens back as they are generated."
      />
      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <Card>
          <CardHeader title="New job" />
          <CardBody>
            <NewJobForm tenantId={tenant} />
          </CardBody>
        </Card>
        <RecentJobs />
      </div>
    </>
  );
}
