"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { isFinalJob, JOB_STATUSES } from "@/lib/jobs/status";
import { errorMessage } from "../api";
import { plural } from "../format";
import { Card, CardHeader } from "../ui/card";
import { LoadMore, StatusFilter } from "../ui/list-controls";
import { Alert, Empty, Loading } from "../ui/states";
import { TimeAgo } from "../ui/time";
import { JobStatusBadge } from "./job-status";
import { fetchJobs, jobQueries } from "./queries";

export function RecentJobs() {
  const [status, setStatus] = useState("");
  const jobs = useInfiniteQuery({
    queryKey: jobQueries.filtered(status),
    queryFn: ({ pageParam }) => fetchJobs(pageParam, status),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
    // Poll only while something is still moving.
    refetchInterval: (query) =>
      query.state.data?.pages.some((p) => p.data.some((j) => !isFinalJob(j.status))) ? 2000 : 15_000,
  });
  // The server filters (an index per status): every page holds only the status asked for.
  const shown = jobs.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <Card aria-labelledby="recent-jobs">
      <CardHeader
        title={<span id="recent-jobs">Recent jobs</span>}
        description="Your tenant's latest generations."
        actions={
          <StatusFilter label="Show jobs with status" statuses={JOB_STATUSES} value={status} onChange={setStatus} />
        }
      />
      {jobs.isPending ? (
        <Loading className="px-5" />
      ) : jobs.isError ? (
        <div className="p-5">
          <Alert title="Could not load jobs">{errorMessage(jobs.error)}</Alert>
        </div>
      ) : shown.length === 0 ? (
        <Empty title={status ? `No ${status.toLowerCase()} jobs` : "No jobs yet"}>
          {status ? "None of your recent jobs has this status; show all statuses." : "Submit a prompt to see it here."}
        </Empty>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="recent-jobs">
          {shown.map((job) => (
            <li key={job.job_id}>
              <Link
                href={`/dashboard/jobs/${job.job_id}`}
                className="block px-5 py-3 outline-none hover:bg-zinc-50 focus-visible:bg-zinc-50 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-inset dark:hover:bg-zinc-800/50 dark:focus-visible:bg-zinc-800/50"
              >
                <div className="flex items-center justify-between gap-3">
                  <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-100">
                    {job.prompt || "(empty prompt)"}
                  </p>
                  <JobStatusBadge status={job.status} />
                </div>
                <p className="mt-1 flex flex-wrap gap-x-3 text-xs text-zinc-600 dark:text-zinc-400">
                  <span className="font-mono">{job.model_name}</span>
                  <TimeAgo iso={job.created_at} />
                  {job.usage && <span>{plural(job.usage.completion_tokens, "token")}</span>}
                </p>
              </Link>
            </li>
          ))}
        </ul>
      )}
      <LoadMore hasMore={jobs.hasNextPage} loading={jobs.isFetchingNextPage} onLoad={() => void jobs.fetchNextPage()} />
    </Card>
  );
}
