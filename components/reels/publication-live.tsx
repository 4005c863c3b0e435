"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect } from "react";
import { PUBLICATION_EVENT_KINDS, type PublicationView } from "@/lib/reels/publication";
import { errorMessage, fetchJson } from "../api";
import { Button } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Alert, Loading } from "../ui/states";
import { Time, ZoneName } from "../ui/time";
import { PublicationStatusBadge } from "./publication-status";
import { isSettledPublication } from "@/lib/reels/status";
import { fetchAccounts, fetchPosts, fetchPublication, reelKeys, type Publication } from "./queries";
import { ReelVideo } from "./reel-video";
import { ScheduledActions } from "./scheduled-actions";
import { RetryPublicationButton } from "./retry-publication-button";
import { Detail } from "./detail";
import { ReelParameterDetails } from "./reel-parameter-details";
import { ReelInsights } from "./reel-insights";

export function PublicationLive({ publicationId, initial }: { publicationId: string; initial: PublicationView }) {
  const queryClient = useQueryClient();
  const publication = useQuery({
    queryKey: reelKeys.one(publicationId),
    queryFn: () => fetchPublication(publicationId),
    initialData: initial,
    // The event stream drives updates; this slower poll only covers a stream that cannot connect.
    refetchInterval: (query) => (query.state.data && isSettledPublication(query.state.data.status) ? false : 2000),
  });
  const settled = publication.data ? isSettledPublication(publication.data.status) : false;
  // Listen while the publication is on its way; a resume opens the stream again.
  const listening = publication.isSuccess && !settled;

  useEffect(() => {
    if (!listening) return;
    const source = new EventSource(`/v1/reels/${encodeURIComponent(publicationId)}/events`);
    const changed = () => void queryClient.invalidateQueries({ queryKey: reelKeys.one(publicationId) });
    // Any event of the stream means "the publication changed".
    for (const name of PUBLICATION_EVENT_KINDS) source.addEventListener(name, changed);
    return () => source.close();
  }, [publicationId, listening, queryClient]);

  const resume = useMutation({
    mutationFn: () =>
      fetchJson<{ publication_id: string; status: string }>(`/v1/reels/${encodeURIComponent(publicationId)}/resume`, {
        method: "POST",
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: reelKeys.one(publicationId) });
      void queryClient.invalidateQueries({ queryKey: reelKeys.list });
    },
  });

  const view = publication.data;

  return (
    <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
      <div className="space-y-6">
        <Card>
          <CardHeader
            title={
              <span className="flex items-center gap-3">
                Timeline <PublicationStatusBadge status={view.status} />
              </span>
            }
            description={
              view.status === "SCHEDULED" && view.scheduled_reason ? (
                <WaitingNote view={view} />
              ) : view.status === "SCHEDULED" && view.publish_at ? (
                <>
                  Publishes <Time iso={view.publish_at} />{" "}
                  <span className="text-xs">
                    (<ZoneName iso={view.publish_at} />)
                  </span>
                </>
              ) : settled ? undefined : (
                "Updates live as the worker goes."
              )
            }
          />
          <CardBody>
            <Timeline view={view} />
          </CardBody>
        </Card>
        {view.status === "SCHEDULED" && <ScheduledActions view={view} />}
        <Outcome
          view={view}
          onResume={() => resume.mutate()}
          resuming={resume.isPending}
          resumeError={resume.isError ? errorMessage(resume.error) : undefined}
        />
        {view.warnings?.length > 0 && (
          <Alert tone="warning" title="Preflight warnings: Graph accepts the video, but advises against these">
            <ul className="list-disc space-y-1 pl-5" data-testid="publication-warnings">
              {view.warnings.map((warning) => (
                <li key={warning}>{warning}</li>
              ))}
            </ul>
          </Alert>
        )}
      </div>
      <div className="space-y-6">
        <Details view={view} />
        {view.status === "PUBLISHED" && <ReelInsights publicationId={view.publication_id} />}
        {view.status === "PUBLISHED" && <PublishedVideo view={view} />}
      </div>
    </div>
  );
}

/** Why a publication Dispatch put back to SCHEDULED waits, and until when. */
function WaitingNote({ view }: { view: Publication }) {
  const at = view.publish_at ? <Time iso={view.publish_at} /> : null;
  if (view.scheduled_reason === "needs_reconnect")
    return <>Waiting: the account needs reconnecting (Accounts page); it goes on once reconnected.</>;
  if (view.scheduled_reason === "quota")
    return <>Waiting for the publishing quota; tried again {at ?? "when the window frees a slot"}.</>;
  return <>Graph asked to slow down; tried again {at ?? "soon"}.</>;
}

type Entry = { at: string; seq: number; key: string } & (
  { kind: "step"; step: Publication["steps"][number] } | { kind: "poll"; poll: Publication["polls"][number] }
);

const STEP_TONE = (step: string) =>
  /fail|error|expired|refused/i.test(step)
    ? "bg-red-500"
    : /timed|timeout/i.test(step)
      ? "bg-amber-500"
      : /published/i.test(step)
        ? "bg-emerald-500"
        : "bg-indigo-500";

const POLL_TONE: Record<string, string> = {
  IN_PROGRESS: "text-blue-700 dark:text-blue-300",
  FINISHED: "text-emerald-700 dark:text-emerald-300",
  PUBLISHED: "text-emerald-700 dark:text-emerald-300",
  ERROR: "text-red-700 dark:text-red-300",
  EXPIRED: "text-amber-700 dark:text-amber-300",
};

const humanize = (step: string) => {
  const words = step.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

// Events written in the same millisecond keep the order they happened in: their seq, not their time.
const bySeq = (a: Entry, b: Entry) => a.seq - b.seq;

function Timeline({ view }: { view: Publication }) {
  const entries: Entry[] = [
    ...view.steps.map((step, i) => ({ at: step.at, seq: step.seq, key: `s${i}`, kind: "step" as const, step })),
    ...view.polls.map((poll, i) => ({ at: poll.at, seq: poll.seq, key: `p${i}`, kind: "poll" as const, poll })),
  ].sort(bySeq);
  if (entries.length === 0)
    return <p className="text-sm text-zinc-600 dark:text-zinc-400">Nothing has happened yet.</p>;
  return (
    <ol className="relative space-y-0" data-testid="timeline" aria-live="polite">
      {entries.map((entry, i) => (
        <li key={entry.key} className="relative flex gap-3 pb-4 last:pb-0" data-kind={entry.kind} data-seq={entry.seq}>
          {i < entries.length - 1 && (
            <span className="absolute top-3 left-[5px] h-full w-px bg-zinc-200 dark:bg-zinc-800" aria-hidden="true" />
          )}
          {entry.kind === "step" ? (
            <>
              <span
                className={cx(
                  "relative mt-1.5 size-[11px] shrink-0 rounded-full ring-4 ring-white dark:ring-zinc-900",
                  STEP_TONE(entry.step.step),
                )}
                aria-hidden="true"
              />
              <div className="min-w-0 flex-1">
                <div className="flex items-baseline justify-between gap-3">
                  <p
                    className="min-w-0 text-sm font-medium text-zinc-900 dark:text-zinc-100"
                    data-step={entry.step.step}
                  >
                    {humanize(entry.step.step)}
                  </p>
                  <Time
                    iso={entry.at}
                    format="time"
                    className="shrink-0 text-xs text-zinc-600 tabular-nums dark:text-zinc-400"
                  />
                </div>
                {entry.step.detail && (
                  <p className="mt-0.5 text-sm break-words text-zinc-600 dark:text-zinc-400">
                    <WithLocalTimes text={entry.step.detail} />
                  </p>
                )}
              </div>
            </>
          ) : (
            <>
              <span
                className="relative mt-2 ml-[2px] size-[7px] shrink-0 rounded-full bg-zinc-300 ring-4 ring-white dark:bg-zinc-600 dark:ring-zinc-900"
                aria-hidden="true"
              />
              <div className="flex min-w-0 flex-1 items-baseline justify-between gap-3" data-testid="poll">
                <p className="min-w-0 text-sm text-zinc-600 dark:text-zinc-400">
                  Poll #{entry.poll.attempt} ·{" "}
                  <span
                    className={cx(
                      "font-mono text-xs font-medium",
                      POLL_TONE[entry.poll.status_code ?? ""] ?? "text-zinc-700 dark:text-zinc-300",
                    )}
                  >
                    {entry.poll.status_code ?? "no status_code"}
                  </span>
                  {entry.poll.status && entry.poll.status !== entry.poll.status_code && (
                    <span className="ml-2 text-xs break-words text-zinc-600 dark:text-zinc-400">
                      {entry.poll.status}
                    </span>
                  )}
                </p>
                <Time
                  iso={entry.at}
                  format="time"
                  className="shrink-0 text-xs text-zinc-600 tabular-nums dark:text-zinc-400"
                />
              </div>
            </>
          )}
        </li>
      ))}
    </ol>
  );
}

const ISO_TIME = /(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))/;

/** A step's detail with any ISO time in it shown as every other time on the page: local, zone on hover. */
function WithLocalTimes({ text }: { text: string }) {
  // split with a capturing group: the odd parts are the times.
  return text.split(ISO_TIME).map((part, i) => (i % 2 === 1 ? <Time key={i} iso={part} /> : part));
}

function Outcome({
  view,
  onResume,
  resuming,
  resumeError,
}: {
  view: Publication;
  onResume: () => void;
  resuming: boolean;
  resumeError?: string;
}) {
  if (view.status === "PUBLISHED") {
    return (
      <Alert
        tone="info"
        title="Published"
        className="border-emerald-200 bg-emerald-50 text-emerald-900 dark:border-emerald-900 dark:bg-emerald-950/50 dark:text-emerald-200"
      >
        <p>
          Post{" "}
          <span className="font-mono" data-testid="post-id">
            {view.post_id}
          </span>
          {view.permalink && (
            <>
              {" · "}
              <a href={view.permalink} target="_blank" rel="noreferrer" className="font-medium underline">
                Open permalink
              </a>
            </>
          )}
        </p>
      </Alert>
    );
  }
  if (view.status === "FAILED" && view.error) {
    const { code, subcode, message, fbtrace_id, classification, response, headline, remedy } = view.error;
    return (
      <div
        role="alert"
        className="rounded-xl border border-red-200 bg-red-50 p-5 text-sm text-red-900 dark:border-red-900 dark:bg-red-950/40 dark:text-red-100"
        data-testid="publication-error"
      >
        <p className="font-semibold">Publishing failed</p>
        <p className="mt-1 break-words" data-testid="error-headline">
          {headline}
        </p>
        <dl className="mt-3 grid grid-cols-2 gap-3 sm:grid-cols-4" aria-label="For support">
          <ErrorFact label="Code" value={code} testId="error-code" />
          <ErrorFact label="Subcode" value={subcode} testId="error-subcode" />
          <ErrorFact label="Class" value={classification.replace(/-/g, " ")} />
          <ErrorFact label="fbtrace_id" value={fbtrace_id} testId="error-fbtrace" />
        </dl>
        <div
          className="mt-4 rounded-lg bg-white/70 p-3 text-red-950 dark:bg-black/20 dark:text-red-100"
          data-testid="error-advice"
        >
          <p className="text-xs font-semibold tracking-wide uppercase">What to do</p>
          <p className="mt-1">{remedy}</p>
        </div>
        {(message !== headline || response !== undefined) && (
          <details className="mt-3">
            <summary className="inline-flex min-h-11 cursor-pointer items-center text-xs font-medium sm:min-h-0">
              Graph&apos;s answer
            </summary>
            {message !== headline && <p className="mt-2 font-mono text-xs break-words">{message}</p>}
            {response !== undefined && (
              <pre className="mt-2 overflow-x-auto rounded bg-white/70 p-2 font-mono text-xs dark:bg-black/30">
                {JSON.stringify(response, null, 2)}
              </pre>
            )}
          </details>
        )}
        <RetryPublicationButton publicationId={view.publication_id} />
      </div>
    );
  }
  if (view.status === "TIMED_OUT") {
    return (
      <Alert tone="warning" title="Still processing when polling stopped">
        <p>
          The container did not finish within the polling window. It was not published blind; resume to poll it again
          while it lives (24 h).
        </p>
        <Button className="mt-3" size="sm" variant="secondary" loading={resuming} onClick={onResume}>
          Resume polling
        </Button>
        {resumeError && <p className="mt-2 text-red-700 dark:text-red-300">{resumeError}</p>}
        <RetryPublicationButton publicationId={view.publication_id} />
      </Alert>
    );
  }
  return null;
}

function ErrorFact({ label, value, testId }: { label: string; value: React.ReactNode; testId?: string }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs">{label}</dt>
      <dd className="truncate font-mono text-xs font-medium" data-testid={testId}>
        {value ?? "—"}
      </dd>
    </div>
  );
}

function Details({ view }: { view: Publication }) {
  const accounts = useQuery({ queryKey: reelKeys.accounts, queryFn: fetchAccounts, staleTime: 60_000 });
  const account = accounts.data?.data.find((a) => a.account_id === view.account_id);
  return (
    <Card>
      <CardHeader title="Details" />
      <CardBody>
        <dl className="space-y-3 text-sm">
          <Detail
            label="Account"
            value={
              <span data-testid="account">
                {account?.username && <span className="block font-medium">@{account.username}</span>}
                <span className="font-mono">{view.account_id}</span>
              </span>
            }
          />
          <Detail
            label="Container"
            value={
              <span className="font-mono" data-testid="container-id">
                {view.container_id ?? "—"}
              </span>
            }
          />
          <Detail label="Last status_code" value={<span className="font-mono">{view.last_status_code ?? "—"}</span>} />
          <Detail
            label="Video"
            value={
              <span className="font-mono text-xs break-all">
                {view.video_url ?? `Uploaded file (${view.upload_id})`}
              </span>
            }
          />
          <Detail
            label="Caption"
            value={
              view.caption ? (
                <span className="whitespace-pre-line">{view.caption}</span>
              ) : (
                <span className="text-zinc-600 dark:text-zinc-400">None</span>
              )
            }
          />
          <Detail label="Share to feed" value={view.share_to_feed ? "Yes" : "No"} />
          <ReelParameterDetails view={view} />
          {view.publish_at && <Detail label="Publish at" value={<Time iso={view.publish_at} />} />}
          <Detail label="Created" value={<Time iso={view.created_at} />} />
        </dl>
      </CardBody>
    </Card>
  );
}

function PublishedVideo({ view }: { view: Publication }) {
  // A list fetched before this post existed is stale for it: ask again until the post is there.
  const posts = useQuery({
    queryKey: reelKeys.posts(view.account_id),
    queryFn: () => fetchPosts(view.account_id),
    staleTime: 0,
    refetchInterval: (query) => (query.state.data?.data.some((p) => p.id === view.post_id) ? false : 1500),
  });
  const post = posts.data?.data.find((p) => p.id === view.post_id);
  if (posts.isError) return <Alert title="Could not load the published reel">{errorMessage(posts.error)}</Alert>;
  if (!post) return <Loading label="Loading the reel…" />;
  return (
    <div>
      <ReelVideo post={post} />
      <p className="mt-2 text-center text-xs text-zinc-600 dark:text-zinc-400">
        <Link href="/dashboard/reels" className="inline-flex min-h-11 items-center hover:underline sm:min-h-0">
          All published reels
        </Link>
      </p>
    </div>
  );
}
