"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { errorMessage } from "../api";
import { formatAgo, formatNumber } from "../format";
import { Card, CardHeader } from "../ui/card";
import { Alert, Empty, Loading } from "../ui/states";
import { JobStatusBadge } from "./job-status";
import { isFinalJob } from "@/lib/jobs/status";
import { fetchJobs, jobQueries } from "./queries";

export function RecentJobs() {
  const jobs = useQuery({
    queryKey: jobQueries.list,
    queryFn: fetchJobs,
    // Poll only while something is still moving.
    refetchInterval: (query) => (query.state.data?.data.some((j) => !isFinalJob(j.status)) ? 2000 : 15_000),
  });

  return (
    <Card aria-labelledby="recent-jobs">
      <CardHeader title={<span id="recent-jobs">Recent jobs</span>} description="Your tenant's latest generations." />
      {jobs.isPending ? (
        <Loading className="px-5" />
      ) : jobs.isError ? (
        <div className="p-5">
          <Alert title="Could not load jobs">{errorMessage(jobs.error)}</Alert>
        </div>
      ) : jobs.data.data.length === 0 ? (
        <Empty title="No jobs yet">Submit a prompt to see it here.</Empty>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="recent-jobs">
          {jobs.data.data.map((job) => (
            <li key={job.job_id}>
              <Link
                href={`/dashboard/jobs/${job.job_id}`}
                className="block px-5 py-3 outline-none hover:bg-zinc-50 focus-visible:bg-zinc-50 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-inset dark:hover:bg-zinc-800/50 dark:focus-visible:bg-zinc-800/50"
              >
                <div className="flex items-center justify-between gap-3">
                  <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-100">{job.prompt || "(empty prompt)"}</p>
                  <JobStatusBadge status={job.status} />
                </div>
                <p className="mt-1 flex flex-wrap gap-x-3 text-xs text-zinc-500 dark:text-zinc-400">
                  <span className="font-mono">{job.model_name}</span>
                  <span>{formatAgo(job.created_at)}</span>
                  {job.usage && <span>{formatNumber(job.usage.completion_tokens)} tokens</span>}
                </p>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
