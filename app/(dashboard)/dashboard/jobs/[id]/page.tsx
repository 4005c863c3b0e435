import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { JobLive } from "@/components/jobs/job-live";
import { PageHeader } from "@/components/page-header";
import { parseJobId } from "@/lib/jobs/job-id";
import { readJob } from "@/lib/jobs/read-job";
import { getServices } from "@/lib/web/services";
import { sessionTenant } from "../../../../session-tenant";

export const metadata: Metadata = { title: "Job" };

/** A job the session's tenant can see, or the not-found page (a real 404) for any other id. */
async function findJob(id: string) {
  const tenant = await sessionTenant();
  let jobId: string;
  try {
    jobId = parseJobId(id);
  } catch {
    return undefined;
  }
  return tenant ? readJob(getServices().redis, tenant, jobId) : undefined;
}

export default async function JobPage({ params }: { params: Promise<{ id: string }> }) {
  const job = await findJob((await params).id);
  if (!job) notFound();
  return (
    <>
      <Link
        href="/dashboard/jobs"
        className="mb-3 inline-flex min-h-11 items-center gap-1 text-sm text-zinc-600 hover:text-zinc-900 sm:min-h-0 dark:text-zinc-400 dark:hover:text-white"
      >
        <span aria-hidden="true">←</span> Jobs
      </Link>
      <PageHeader title="Job" />
      <JobLive jobId={job.job_id} initial={job} />
    </>
  );
}
