import type { Metadata } from "next";
import Link from "next/link";
import { JobLive } from "@/components/jobs/job-live";
import { PageHeader } from "@/components/page-header";

export const metadata: Metadata = { title: "Job" };

export default async function JobPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <>
      <Link href="/dashboard/jobs" className="mb-3 inline-flex items-center gap-1 text-sm text-zinc-500 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-white">
        <span aria-hidden="true">←</span> Jobs
      </Link>
      <PageHeader title="Job" />
      <JobLive jobId={id} />
    </>
  );
}
