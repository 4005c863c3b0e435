import type { ConsumerLoad, WorkerLoad } from "@/lib/live-workers";
import { formatNumber } from "../format";
import { TimeAgo } from "../ui/time";
import { Badge } from "../ui/badge";
import { Card, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Empty } from "../ui/states";

const CONSUMER_LABELS: Record<string, string> = { generation: "Generation", reels: "Reels" };
const CONSUMER_ORDER = Object.keys(CONSUMER_LABELS);

const labelOf = (name: string) => CONSUMER_LABELS[name] ?? name.charAt(0).toUpperCase() + name.slice(1);
const orderOf = (name: string) =>
  CONSUMER_ORDER.includes(name) ? CONSUMER_ORDER.indexOf(name) : CONSUMER_ORDER.length;

/** Each live worker's consumers: running jobs against capacity, the partitions held and each partition's window. */
export function WorkerLoadCard({ workers }: { workers: WorkerLoad[] }) {
  return (
    <Card>
      <CardHeader
        title="Worker load"
        description="Jobs running and free slots per worker; each partition's window of fetched jobs"
      />
      {workers.length === 0 ? (
        <Empty title="No live workers">Jobs wait in the log until a worker starts.</Empty>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="workers">
          {workers.map((worker) => (
            <WorkerItem key={worker.id} worker={worker} />
          ))}
        </ul>
      )}
    </Card>
  );
}

function WorkerItem({ worker }: { worker: WorkerLoad }) {
  const consumers = Object.entries(worker.consumers).sort(([a], [b]) => orderOf(a) - orderOf(b) || a.localeCompare(b));
  return (
    <li className="px-5 py-4" data-testid="worker-load" data-worker={worker.id} aria-label={`Worker ${worker.id}`}>
      <div className="flex items-baseline justify-between gap-3">
        <p className="truncate font-mono text-sm" title={worker.id}>
          {worker.id}
        </p>
        <span className="shrink-0 text-xs text-zinc-500 tabular-nums dark:text-zinc-400">
          seen <TimeAgo iso={worker.last_seen} />
        </span>
      </div>
      {consumers.length === 0 ? (
        <p className="mt-2 text-sm text-zinc-500 dark:text-zinc-400">No consumers started yet.</p>
      ) : (
        <div className="mt-3 grid grid-cols-1 gap-4 lg:grid-cols-2">
          {consumers.map(([name, load]) => (
            <ConsumerBlock key={name} workerId={worker.id} name={name} load={load} />
          ))}
        </div>
      )}
    </li>
  );
}

function ConsumerBlock({ workerId, name, load }: { workerId: string; name: string; load: ConsumerLoad }) {
  const label = labelOf(name);
  const free = Math.max(0, load.capacity - load.running);
  const full = load.capacity > 0 && free === 0;
  return (
    <section
      className="min-w-0 border-zinc-100 sm:rounded-lg sm:border dark:border-zinc-800"
      data-consumer={name}
      aria-label={`${label} on ${workerId}`}
    >
      <div className="space-y-2 py-3 sm:px-4">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h3 className="text-sm font-medium">{label}</h3>
          <Badge
            tone={full ? "warning" : load.running > 0 ? "info" : "neutral"}
            live={load.running > 0}
            data-testid="consumer-running"
          >
            {formatNumber(load.running)} running / {formatNumber(load.capacity)}
          </Badge>
        </div>
        <div className="h-1.5 overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800" aria-hidden="true">
          <div
            className={cx("h-full rounded-full", full ? "bg-amber-500" : "bg-blue-500")}
            style={{ width: `${load.capacity > 0 ? Math.min(100, (load.running / load.capacity) * 100) : 0}%` }}
          />
        </div>
        <p className="text-xs text-zinc-500 dark:text-zinc-400">
          <span className="tabular-nums">{formatNumber(free)}</span> free {free === 1 ? "slot" : "slots"} ·{" "}
          {load.partitions.length === 0 ? "holds no partitions" : `partitions ${load.partitions.join(", ")}`}
        </p>
      </div>
      {load.windows.length > 0 ? (
        <WindowTable caption={`${label} windows on ${workerId}`} windows={load.windows} />
      ) : (
        <p className="border-t border-zinc-100 py-2 text-xs sm:px-4 text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
          No windows open: nothing fetched yet.
        </p>
      )}
    </section>
  );
}

function WindowTable({ caption, windows }: { caption: string; windows: ConsumerLoad["windows"] }) {
  return (
    <div className="overflow-x-auto border-t border-zinc-100 dark:border-zinc-800">
      <table className="w-full text-xs" data-testid="windows">
        <caption className="sr-only">{caption}</caption>
        <thead className="text-left text-zinc-500 dark:text-zinc-400">
          <tr>
            <th scope="col" className="py-1.5 pr-1 font-medium sm:pr-2 sm:pl-4">
              <span className="sm:hidden" aria-hidden="true">
                Part.
              </span>
              <span className="sr-only sm:not-sr-only">Partition</span>
            </th>
            <th
              scope="col"
              className="px-1 py-1.5 text-right font-medium sm:px-2"
              title="Fetched and not settled: waiting or running"
            >
              Buffered
            </th>
            <th scope="col" className="px-1 py-1.5 text-right font-medium sm:px-2">
              Running
            </th>
            <th
              scope="col"
              className="px-1 py-1.5 text-right font-medium sm:px-2"
              title="The lowest unsettled offset: what the window commits up to"
            >
              Watermark
            </th>
            <th scope="col" className="py-1.5 pl-1 text-right font-medium sm:pr-4 sm:pl-2">
              Committed
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {windows.map((w) => (
            <tr key={w.partition} data-partition={w.partition}>
              <td className="py-1.5 pr-1 sm:pr-2 sm:pl-4">
                <span className="inline-flex items-center gap-2">
                  <span className="font-mono">{w.partition}</span>
                  {w.paused && (
                    <Badge
                      tone="warning"
                      title="The window is full: fetching resumes when it is half empty"
                      data-testid="window-paused"
                    >
                      <span className="sr-only sm:not-sr-only">Paused</span>
                    </Badge>
                  )}
                </span>
              </td>
              <td className="px-1 py-1.5 text-right sm:px-2 tabular-nums">{formatNumber(w.buffered)}</td>
              <td className="px-1 py-1.5 text-right sm:px-2 tabular-nums">{formatNumber(w.running)}</td>
              <td className="px-1 py-1.5 text-right sm:px-2 font-mono tabular-nums">{w.watermark ?? "—"}</td>
              <td className="py-1.5 pl-1 text-right sm:pr-4 sm:pl-2 font-mono tabular-nums">{w.committed ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
