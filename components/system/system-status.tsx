"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { checkHealth } from "@/lib/health";
import type { JobStatus } from "@/lib/jobs/status";
import type { TenantLoad } from "@/lib/system/read-running";
import type { GroupLag } from "@/lib/consumer-lag";
import type { SystemStatus } from "@/lib/system/read-system-status";
import { errorMessage, fetchJson } from "../api";
import { formatMs, formatNumber, plural } from "../format";
import { Time } from "../ui/time";
import { JobStatusBadge } from "../jobs/job-status";
import { Badge } from "../ui/badge";
import { Card, CardBody, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Alert, Empty, Loading } from "../ui/states";
import { TenantLoadCard } from "./tenant-load";
import { WorkerLoadCard } from "./worker-load";

type Health = Awaited<ReturnType<typeof checkHealth>>;
type SystemView = SystemStatus & { health: Health; tenant: TenantLoad | null };

const REFRESH_MS = 3000;

export function SystemStatusView() {
  const system = useQuery({
    queryKey: ["system"],
    queryFn: () => fetchJson<SystemView>("/api/system"),
    refetchInterval: REFRESH_MS,
    refetchIntervalInBackground: false,
  });

  if (system.isPending) return <Loading label="Reading the system…" />;
  if (system.isError && !system.data)
    return <Alert title="Could not read the system status">{errorMessage(system.error)}</Alert>;
  const { health, kafka, jobs, generated_at, tenant } = system.data;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center gap-3 text-sm text-zinc-500 dark:text-zinc-400">
        <Badge tone={health.status === "ok" ? "success" : "danger"} live data-testid="system-overall">
          {health.status === "ok" ? "All systems operational" : `Degraded: ${health.failing.join(", ")}`}
        </Badge>
        <span>
          Updated <Time iso={generated_at} format="time" /> · refreshes every {REFRESH_MS / 1000} s
        </span>
        {system.isError && (
          <span className="text-red-600 dark:text-red-400">Last refresh failed: {errorMessage(system.error)}</span>
        )}
      </div>

      <div className="grid gap-4 sm:grid-cols-3">
        <PartCard title="Redis" part={health.redis} detail="Read model, streams, leases" testId="health-redis" />
        <PartCard title="Kafka broker" part={health.kafka} detail="Command log and audit log" testId="health-kafka" />
        <Card data-testid="health-workers">
          <CardBody>
            <p className="text-sm font-medium text-zinc-500 dark:text-zinc-400">Workers</p>
            <p className="mt-2 text-2xl font-semibold tabular-nums">{health.workers.count}</p>
            <p className="mt-1 text-xs text-zinc-500 dark:text-zinc-400">seen in the last 6 s</p>
          </CardBody>
        </Card>
      </div>

      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader
            title="Jobs by status"
            description={jobs.ok ? `Your tenant's ${plural(jobs.counted, "job")} from the last 24 h` : undefined}
          />
          <CardBody>
            {jobs.ok ? (
              <JobsByStatus counts={jobs.by_status} total={jobs.counted} />
            ) : (
              <Alert title="Redis did not answer">{jobs.error}</Alert>
            )}
          </CardBody>
        </Card>

        <TenantLoadCard tenant={tenant} />
      </div>

      <WorkerLoadCard workers={health.workers.seen} />

      {kafka.ok ? (
        <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-2">
          {kafka.groups.map((group) => (
            <LagCard key={group.topic} group={group} />
          ))}
        </div>
      ) : (
        <Alert title="Consumer lag is unavailable">{kafka.error}</Alert>
      )}

      <Card>
        <CardHeader
          title="Recent completions"
          description={
            kafka.ok
              ? `${plural(kafka.audit_log.events, "event")} in the audit log (${kafka.audit_log.topic})`
              : undefined
          }
        />
        {!jobs.ok ? null : jobs.recent_completed.length === 0 ? (
          <Empty title="Nothing finished yet" />
        ) : (
          <div className="overflow-x-auto">
            <table className="w-full text-sm" data-testid="recent-completions">
              <thead className="text-left text-xs text-zinc-500 dark:text-zinc-400">
                <tr className="border-b border-zinc-100 dark:border-zinc-800">
                  <th className="px-5 py-2 font-medium">Job</th>
                  <th className="px-3 py-2 font-medium">Status</th>
                  <th className="hidden px-3 py-2 font-medium sm:table-cell">Worker</th>
                  <th className="px-3 py-2 text-right font-medium">TTFT</th>
                  <th className="px-3 py-2 text-right font-medium">Tokens</th>
                  <th className="hidden px-5 py-2 text-right font-medium sm:table-cell">Finished</th>
                </tr>
              </thead>
              <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
                {jobs.recent_completed.map((job) => (
                  <tr key={job.job_id}>
                    <td className="px-5 py-2.5">
                      <Link
                        href={`/dashboard/jobs/${job.job_id}`}
                        className="font-mono text-xs text-indigo-600 hover:underline dark:text-indigo-400"
                      >
                        {job.job_id.slice(0, 8)}
                      </Link>
                    </td>
                    <td className="px-3 py-2.5">
                      <JobStatusBadge status={job.status} />
                    </td>
                    <td className="hidden px-3 py-2.5 font-mono text-xs sm:table-cell">{job.worker_id ?? "—"}</td>
                    <td className="px-3 py-2.5 text-right tabular-nums">{formatMs(job.ttft_ms)}</td>
                    <td className="px-3 py-2.5 text-right tabular-nums">{formatNumber(job.completion_tokens)}</td>
                    <td className="hidden px-5 py-2.5 text-right text-zinc-500 tabular-nums sm:table-cell dark:text-zinc-400">
                      <Time iso={job.completed_at} format="time" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}

function PartCard({
  title,
  part,
  detail,
  testId,
}: {
  title: string;
  part: Health["redis"];
  detail: string;
  testId: string;
}) {
  return (
    <Card data-testid={testId}>
      <CardBody>
        <div className="flex items-center justify-between gap-2">
          <p className="text-sm font-medium text-zinc-500 dark:text-zinc-400">{title}</p>
          <Badge tone={part.ok ? "success" : "danger"}>{part.ok ? "Healthy" : "Down"}</Badge>
        </div>
        <p className="mt-2 text-2xl font-semibold tabular-nums">{part.ok ? formatMs(part.latency_ms) : "—"}</p>
        <p
          className={cx(
            "mt-1 truncate text-xs",
            part.ok ? "text-zinc-500 dark:text-zinc-400" : "text-red-600 dark:text-red-400",
          )}
          title={part.ok ? undefined : part.error}
        >
          {part.ok ? `round trip · ${detail}` : part.error}
        </p>
      </CardBody>
    </Card>
  );
}

const STATUS_BAR: Record<JobStatus, string> = {
  QUEUED: "bg-zinc-400",
  RUNNING: "bg-blue-500",
  COMPLETED: "bg-emerald-500",
  FAILED: "bg-red-500",
  CANCELLED: "bg-amber-500",
};

function JobsByStatus({ counts, total }: { counts: Record<JobStatus, number>; total: number }) {
  const statuses = Object.keys(counts) as JobStatus[];
  return (
    <div className="space-y-4">
      <div className="flex h-2 overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800" aria-hidden="true">
        {statuses.map((s) =>
          counts[s] > 0 ? (
            <div key={s} className={STATUS_BAR[s]} style={{ width: `${(counts[s] / Math.max(1, total)) * 100}%` }} />
          ) : null,
        )}
      </div>
      <dl className="grid grid-cols-3 gap-4 sm:grid-cols-5" data-testid="jobs-by-status">
        {statuses.map((s) => (
          <div key={s}>
            <dt className="flex items-center gap-1.5 text-xs text-zinc-500 dark:text-zinc-400">
              <span className={cx("size-2 rounded-full", STATUS_BAR[s])} aria-hidden="true" />
              {s.charAt(0) + s.slice(1).toLowerCase()}
            </dt>
            <dd className="mt-1 text-xl font-semibold tabular-nums" data-status={s}>
              {formatNumber(counts[s])}
            </dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

function LagCard({ group }: { group: GroupLag }) {
  const max = Math.max(1, ...group.partitions.map((p) => p.lag));
  return (
    <Card data-testid={`lag-${group.topic}`}>
      <CardHeader
        title={<span className="font-mono">{group.topic}</span>}
        description={
          <>
            Consumer group <span className="font-mono">{group.group}</span>
          </>
        }
        actions={
          <Badge tone={group.total_lag === 0 ? "success" : group.total_lag < 50 ? "info" : "warning"}>
            Lag {formatNumber(group.total_lag)}
          </Badge>
        }
      />
      <table className="w-full text-sm">
        <thead className="text-left text-xs text-zinc-500 dark:text-zinc-400">
          <tr className="border-b border-zinc-100 dark:border-zinc-800">
            <th className="px-5 py-2 font-medium">Partition</th>
            <th className="px-3 py-2 text-right font-medium">Committed</th>
            <th className="px-3 py-2 text-right font-medium">End</th>
            <th className="px-5 py-2 font-medium">Lag</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {group.partitions.map((p) => (
            <tr key={p.partition}>
              <td className="px-5 py-2 font-mono text-xs">{p.partition}</td>
              <td className="px-3 py-2 text-right tabular-nums">
                {p.committed === null ? "—" : formatNumber(p.committed)}
              </td>
              <td className="px-3 py-2 text-right tabular-nums">{formatNumber(p.end)}</td>
              <td className="px-5 py-2">
                <div className="flex items-center gap-2">
                  <span className="w-8 text-right tabular-nums">{formatNumber(p.lag)}</span>
                  <div className="hidden h-1.5 flex-1 overflow-hidden sm:block rounded-full bg-zinc-100 dark:bg-zinc-800">
                    <div
                      className={cx("h-full rounded-full", p.lag === 0 ? "bg-emerald-500" : "bg-amber-500")}
                      style={{ width: `${p.lag === 0 ? 4 : (p.lag / max) * 100}%` }}
                    />
                  </div>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}
