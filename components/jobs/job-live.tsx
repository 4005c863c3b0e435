"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import type { JobStatus } from "@/lib/jobs/status";
import type { JobView } from "@/lib/jobs/read-job";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { formatCost, formatDateTime, formatMs, formatNumber } from "../format";
import { Button } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Stat } from "../ui/stat";
import { Alert, Empty, Loading } from "../ui/states";
import { JobStatusBadge } from "./job-status";
import { isFinalJob } from "@/lib/jobs/status";
import { fetchJob, jobQueries } from "./queries";
import { useJobStream, type StreamPhase } from "./use-job-stream";

const PHASE_LABEL: Partial<Record<StreamPhase, string>> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting — the text resumes where it stopped",
  failed: "The live stream is unavailable; the page refreshes the job instead",
};

export function JobLive({ jobId }: { jobId: string }) {
  const queryClient = useQueryClient();
  const job = useQuery({
    queryKey: jobQueries.one(jobId),
    queryFn: () => fetchJob(jobId),
    refetchInterval: (query) => {
      const data = query.state.data;
      return data && isFinalJob(data.status) ? false : 1500;
    },
  });
  // A job already finished is shown from the read model; an unfinished one streams until it ends.
  const stream = useJobStream(jobId, job.isSuccess && !isFinalJob(job.data.status), () => {
    void queryClient.invalidateQueries({ queryKey: jobQueries.one(jobId) });
    void queryClient.invalidateQueries({ queryKey: jobQueries.list });
  });

  const cancel = useMutation({
    mutationFn: () => fetchJson<JobView>(`/jobs/${encodeURIComponent(jobId)}/cancel`, { method: "POST" }),
    onSuccess: (view) => {
      queryClient.setQueryData(jobQueries.one(jobId), view);
      void queryClient.invalidateQueries({ queryKey: jobQueries.list });
    },
  });

  if (job.isPending) return <Loading label="Loading job…" />;
  if (job.isError) {
    const notFound = job.error instanceof ProblemError && job.error.status === 404;
    return (
      <Card>
        <Empty title={notFound ? "No such job" : "Could not load the job"}>
          {notFound ? "It may have expired (jobs are kept for 24 hours) or belong to another tenant." : errorMessage(job.error)}
        </Empty>
        <div className="pb-6 text-center">
          <Link href="/dashboard/jobs" className="text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400">
            Back to jobs
          </Link>
        </div>
      </Card>
    );
  }

  const view = job.data;
  // The stream leads while it delivers (so the badge and the text never disagree); the read model
  // takes over when the job is final and the stream is not connected.
  const fromStream = stream.lastSeq > 0 && (stream.phase === "live" || stream.phase === "done" || !isFinalJob(view.status));
  const status: JobStatus = stream.finalStatus ?? (fromStream ? "RUNNING" : view.status);
  const final = isFinalJob(status);
  const text = fromStream ? stream.text : view.output;
  const streaming = !final && stream.phase !== "idle";

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-4">
        <div className="flex min-w-0 items-center gap-3">
          <JobStatusBadge status={status} />
          <span className="truncate font-mono text-xs text-zinc-500 dark:text-zinc-400" title={view.job_id}>
            {view.job_id}
          </span>
        </div>
        {!final && (
          <Button variant="danger" size="sm" loading={cancel.isPending} onClick={() => cancel.mutate()}>
            Cancel job
          </Button>
        )}
      </div>
      {cancel.isError && <Alert title="Could not cancel">{errorMessage(cancel.error)}</Alert>}
      {view.error && <Alert title="The job failed">{view.error}</Alert>}

      <Card>
        <CardBody>
          <dl className="grid grid-cols-2 gap-x-6 gap-y-5 sm:grid-cols-3 lg:grid-cols-6">
            <Stat label="Time to first token" value={formatMs(view.ttft_ms)} data-testid="stat-ttft" />
            <Stat label="Tokens / s" value={view.tokens_per_second === null ? "—" : view.tokens_per_second.toFixed(1)} data-testid="stat-tps" />
            <Stat label="Prompt tokens" value={formatNumber(view.usage?.prompt_tokens)} data-testid="stat-prompt-tokens" />
            <Stat label="Completion tokens" value={view.usage ? formatNumber(view.usage.completion_tokens) : streaming ? `~${formatNumber(stream.deltas)}` : "—"} data-testid="stat-completion-tokens" />
            <Stat label="Total tokens" value={formatNumber(view.usage?.total_tokens)} data-testid="stat-total-tokens" />
            <Stat label="Cost" value={view.cost_note ? "Not priced" : formatCost(view.cost)} hint={view.cost_note ?? undefined} data-testid="stat-cost" />
          </dl>
        </CardBody>
      </Card>

      <Card>
        <CardHeader
          title="Output"
          description={streaming ? PHASE_LABEL[stream.phase] : final ? `Finished ${formatDateTime(view.completed_at)}` : "Waiting for a worker…"}
          actions={streaming && stream.attempt ? <span className="text-xs text-amber-700 dark:text-amber-400">Attempt {stream.attempt} started over</span> : undefined}
        />
        <CardBody>
          {text || !final ? (
            <div
              data-testid="job-output"
              aria-live="polite"
              aria-busy={streaming}
              className={cx(
                "min-h-32 font-mono text-[13px] leading-relaxed break-words whitespace-pre-wrap text-zinc-800 dark:text-zinc-200",
                streaming && "caret",
              )}
            >
              {text}
            </div>
          ) : (
            <p className="text-sm text-zinc-500 dark:text-zinc-400" data-testid="job-output">
              No output.
            </p>
          )}
        </CardBody>
      </Card>

      <Card>
        <CardHeader title="Request" />
        <CardBody className="space-y-4">
          <p className="text-sm leading-relaxed break-words whitespace-pre-wrap text-zinc-700 dark:text-zinc-300">{view.prompt}</p>
          <dl className="grid grid-cols-2 gap-4 text-sm sm:grid-cols-4">
            <Meta label="Model" value={<span className="font-mono">{view.model_name}</span>} />
            <Meta label="Temperature" value={view.temperature} />
            <Meta label="Max tokens" value={formatNumber(view.max_tokens)} />
            <Meta label="Attempts" value={view.attempts} />
            <Meta label="Submitted" value={formatDateTime(view.created_at)} />
            <Meta label="Started" value={formatDateTime(view.started_at)} />
            <Meta label="Completed" value={formatDateTime(view.completed_at)} />
          </dl>
        </CardBody>
      </Card>
    </div>
  );
}

function Meta({ label, value }: { label: string; value: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-zinc-500 dark:text-zinc-400">{label}</dt>
      <dd className="mt-0.5 truncate text-zinc-800 dark:text-zinc-200">{value}</dd>
    </div>
  );
}
