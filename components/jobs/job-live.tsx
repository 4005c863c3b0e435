"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import type { FinishReason, JobStatus } from "@/lib/jobs/status";
import type { JobView } from "@/lib/jobs/read-job";
import { costOf } from "@/lib/jobs/models";
import { isFinalJob } from "@/lib/jobs/status";
import { errorMessage, fetchJson } from "../api";
import { formatCost, formatMs, formatNumber } from "../format";
import { Button } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Stat } from "../ui/stat";
import { Alert } from "../ui/states";
import { Time, useHydrated, useNow } from "../ui/time";
import { FINISH_LABEL } from "./finish-reason";
import { rememberJobForm } from "./form-memory";
import { JobStatusBadge } from "./job-status";
import { fetchJob, fetchModels, jobQueries } from "./queries";
import { useJobStream, type StreamPhase } from "./use-job-stream";

const PHASE_LABEL: Partial<Record<StreamPhase, string>> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting — the text resumes where it stopped",
  failed: "The live stream is unavailable; the page refreshes the job instead",
};

export function JobLive({ jobId, initial }: { jobId: string; initial: JobView }) {
  const queryClient = useQueryClient();
  const router = useRouter();
  const job = useQuery({
    queryKey: jobQueries.one(jobId),
    queryFn: () => fetchJob(jobId),
    initialData: initial,
    refetchInterval: (query) => {
      const data = query.state.data;
      return data && isFinalJob(data.status) ? false : 1500;
    },
  });
  const models = useQuery({ queryKey: jobQueries.models, queryFn: fetchModels, staleTime: Infinity });
  // A job already finished is shown from the read model; an unfinished one streams until it ends.
  const stream = useJobStream(jobId, !isFinalJob(job.data.status), () => {
    void queryClient.invalidateQueries({ queryKey: jobQueries.one(jobId) });
    void queryClient.invalidateQueries({ queryKey: jobQueries.list });
  });
  const cancel = useMutation({
    mutationFn: () => fetchJson<JobView>(`/v1/jobs/${encodeURIComponent(jobId)}/cancel`, { method: "POST" }),
    onSuccess: (view) => {
      queryClient.setQueryData(jobQueries.one(jobId), view);
      void queryClient.invalidateQueries({ queryKey: jobQueries.list });
    },
  });

  const view = job.data;
  // The stream leads while it delivers (so the badge and the text never disagree); the read model
  // takes over when the job is final and the stream is not connected.
  const fromStream =
    stream.lastSeq > 0 && (stream.phase === "live" || stream.phase === "done" || !isFinalJob(view.status));
  const status: JobStatus = stream.finalStatus ?? (fromStream ? "RUNNING" : view.status);
  const final = isFinalJob(status);
  const text = fromStream ? stream.text : view.output;
  const streaming = !final && stream.phase !== "idle";
  const finishReason = view.finish_reason ?? stream.finishReason ?? undefined;

  const clock = useNow(final ? 60_000 : 500);
  // Figures from "now" are drawn only in the browser: a server render would freeze its own moment into the page.
  const hydrated = useHydrated();
  const now = hydrated ? clock : Number.NaN;
  const startedAt = view.started_at ? Date.parse(view.started_at) : undefined;
  const live = !final && startedAt !== undefined;
  // The first text's arrival is its generation time only if it came after the stream connected;
  // text that was already there arrives in the replay at once, and then the TTFT waits for the end.
  const sawFirstToken =
    stream.firstTextAt !== undefined &&
    stream.connectedAt !== undefined &&
    stream.firstTextAt - stream.connectedAt > 200;
  const liveTtft = live && sawFirstToken ? Math.max(0, stream.firstTextAt! - startedAt) : null;
  // Rates from the job's start (its started_at, so this assumes clocks roughly in step), so a
  // replayed burst does not inflate them; the worker's exact figures replace them at the end.
  const generating = live ? now - startedAt - (liveTtft ?? 0) : Number.NaN;
  const liveRate = generating > 500 && stream.deltas > 0 ? stream.deltas / (generating / 1000) : null;
  const endedAt = view.completed_at ? Date.parse(view.completed_at) : undefined;
  const elapsed =
    startedAt === undefined || (!hydrated && !endedAt)
      ? null
      : final
        ? (endedAt ?? now) - startedAt
        : Math.max(0, now - startedAt);
  const model = models.data?.data.find((m) => m.id === view.model_name);
  // Completion tokens so far at the model's price; the prompt's share is known only at the end.
  const liveCost =
    live && model ? costOf(view.model_name, model, { prompt_tokens: 0, completion_tokens: stream.deltas }) : null;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-4">
        <div className="flex min-w-0 items-center gap-3">
          <JobStatusBadge status={status} />
          <span className="truncate font-mono text-xs text-zinc-600 dark:text-zinc-400" title={view.job_id}>
            {view.job_id}
          </span>
        </div>
        <div className="flex flex-wrap gap-2">
          {!final && (
            <Button variant="danger" size="sm" loading={cancel.isPending} onClick={() => cancel.mutate()}>
              Cancel job
            </Button>
          )}
          <Button
            variant="secondary"
            size="sm"
            onClick={() => {
              rememberJobForm(view.tenant_id, {
                prompt: view.prompt,
                model: view.model_name,
                temperature: String(view.temperature),
                maxTokens: String(view.max_tokens),
              });
              router.push("/dashboard/jobs");
            }}
          >
            Run again
          </Button>
        </div>
      </div>
      {cancel.isError && <Alert title="Could not cancel">{errorMessage(cancel.error)}</Alert>}
      {view.error && <Alert title="The job failed">{view.error}</Alert>}

      <Card>
        <CardBody>
          <dl className="grid grid-cols-2 gap-x-6 gap-y-5 sm:grid-cols-4 lg:grid-cols-7">
            <Stat label="Time to first token" value={formatMs(view.ttft_ms ?? liveTtft)} data-testid="stat-ttft" />
            <Stat
              label="Tokens / s"
              value={
                view.tokens_per_second !== null
                  ? view.tokens_per_second.toFixed(1)
                  : liveRate !== null
                    ? `~${liveRate.toFixed(1)}`
                    : "—"
              }
              data-testid="stat-tps"
            />
            <Stat label="Elapsed" value={formatMs(elapsed)} data-testid="stat-elapsed" />
            <Stat
              label="Prompt tokens"
              value={formatNumber(view.usage?.prompt_tokens)}
              data-testid="stat-prompt-tokens"
            />
            <Stat
              label="Completion tokens"
              value={
                view.usage
                  ? formatNumber(view.usage.completion_tokens)
                  : streaming
                    ? `~${formatNumber(stream.deltas)}`
                    : "—"
              }
              data-testid="stat-completion-tokens"
            />
            <Stat label="Total tokens" value={formatNumber(view.usage?.total_tokens)} data-testid="stat-total-tokens" />
            <Stat
              label="Cost"
              value={
                view.cost
                  ? formatCost(view.cost)
                  : view.cost_note || liveCost?.cost_note
                    ? "Not priced"
                    : liveCost?.cost
                      ? `~${formatCost(liveCost.cost)}`
                      : "—"
              }
              hint={view.cost_note ?? liveCost?.cost_note ?? undefined}
              data-testid="stat-cost"
            />
          </dl>
        </CardBody>
      </Card>

      <Card>
        <CardHeader
          title="Output"
          description={
            streaming ? (
              PHASE_LABEL[stream.phase]
            ) : final ? (
              <Ending status={status} reason={finishReason} completedAt={view.completed_at} />
            ) : (
              "Waiting for a worker…"
            )
          }
          actions={
            <>
              {streaming && stream.attempt ? (
                <span className="text-xs text-amber-800 dark:text-amber-400">
                  Attempt {stream.attempt} started over
                </span>
              ) : null}
              {text && <CopyButton text={text} />}
            </>
          }
        />
        <CardBody>
          <Announcer streaming={streaming} final={final} status={status} reason={finishReason} />
          {text || !final ? (
            <FollowingOutput text={text} streaming={streaming} />
          ) : (
            <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="job-output">
              No output.
            </p>
          )}
        </CardBody>
      </Card>

      <Card>
        <CardHeader title="Request" />
        <CardBody className="space-y-4">
          <p className="text-sm leading-relaxed break-words whitespace-pre-wrap text-zinc-700 dark:text-zinc-300">
            {view.prompt}
          </p>
          <dl className="grid grid-cols-2 gap-4 text-sm sm:grid-cols-4">
            <Meta label="Model" value={<span className="font-mono">{view.model_name}</span>} />
            <Meta label="Temperature" value={view.temperature} />
            <Meta label="Max tokens" value={formatNumber(view.max_tokens)} />
            <Meta label="Attempts" value={view.attempts} />
            <Meta label="Submitted" value={<Time iso={view.created_at} />} />
            <Meta label="Started" value={<Time iso={view.started_at} />} />
            <Meta label="Completed" value={<Time iso={view.completed_at} />} />
          </dl>
        </CardBody>
      </Card>
    </div>
  );
}

/** How the job ended: "Stopped: end of text · Finished 24 Nov, 01:39", or "Cancelled at 01:39:12". */
function Ending({
  status,
  reason,
  completedAt,
}: {
  status: JobStatus;
  reason?: FinishReason;
  completedAt: string | null;
}) {
  if (status === "CANCELLED") {
    return (
      <>
        <span data-testid="finish-reason">{FINISH_LABEL.cancelled}</span> at <Time iso={completedAt} format="time" />
      </>
    );
  }
  return (
    <>
      {reason && (
        <>
          <span data-testid="finish-reason">{FINISH_LABEL[reason]}</span>
          {" · "}
        </>
      )}
      {status === "FAILED" ? "Failed" : "Finished"} <Time iso={completedAt} />
    </>
  );
}

/** Says the generation started and how it ended, once each: the text itself is not read out token by token. */
function Announcer({
  streaming,
  final,
  status,
  reason,
}: {
  streaming: boolean;
  final: boolean;
  status: JobStatus;
  reason?: FinishReason;
}) {
  const message = streaming
    ? "Generating…"
    : final
      ? `Generation ended: ${reason ? FINISH_LABEL[reason] : status.toLowerCase()}.`
      : "";
  return (
    <p role="status" className="sr-only" data-testid="job-announcer">
      {message}
    </p>
  );
}

/** The output, scrolled along as it grows unless the reader scrolled up to read. */
function FollowingOutput({ text, streaming }: { text: string; streaming: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  // The text's height when it was last drawn: the reader "is at the end" if they were at that end.
  // Judged here rather than in onScroll, which fires a frame late and can lose to a fast token.
  const lastHeight = useRef(0);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (lastHeight.current - (el.scrollTop + el.clientHeight) < 24) el.scrollTop = el.scrollHeight;
    lastHeight.current = el.scrollHeight;
  }, [text]);
  return (
    <div
      ref={box}
      role="region"
      aria-label="Generated text"
      aria-busy={streaming}
      // Scrollable, so keyboard users can scroll it too.
      tabIndex={0}
      data-testid="job-output"
      className={cx(
        "max-h-[32rem] min-h-32 overflow-y-auto rounded-md font-mono text-[13px] leading-relaxed break-words whitespace-pre-wrap text-zinc-800 outline-none focus-visible:ring-2 focus-visible:ring-indigo-500 dark:text-zinc-200",
        streaming && "caret",
      )}
    >
      {text}
    </div>
  );
}

function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState<"yes" | "no" | undefined>();
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(undefined), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <Button
      variant="secondary"
      size="sm"
      onClick={() => {
        // The clipboard API exists only in secure contexts (https, localhost).
        (navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject(new Error("no clipboard"))).then(
          () => setCopied("yes"),
          () => setCopied("no"),
        );
      }}
    >
      <span aria-live="polite">{copied === "yes" ? "Copied" : copied === "no" ? "Could not copy" : "Copy output"}</span>
    </Button>
  );
}

function Meta({ label, value }: { label: string; value: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="mt-0.5 truncate text-zinc-800 dark:text-zinc-200">{value}</dd>
    </div>
  );
}
