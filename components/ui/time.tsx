"use client";

import { useEffect, useState, useSyncExternalStore } from "react";
import { formatAgo, formatDateTime, formatFull, formatTime, zoneLabel } from "../format";

const noSubscription = () => () => {};

/**
 * False while the server renders and the browser hydrates, true after: the server knows neither the
 * reader's time zone nor their clock, so local times are drawn only in the browser.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

/** The current time, refreshed every `everyMs`, so relative times age while the page is open. */
export function useNow(everyMs = 10_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

const FORMATS = { time: formatTime, datetime: (iso: string) => formatDateTime(iso) };

/** A moment as the page shows every moment: local, with the full date and zone on hover. */
export function Time({
  iso,
  format = "datetime",
  className,
}: {
  iso: string | null | undefined;
  format?: keyof typeof FORMATS;
  className?: string;
}) {
  const hydrated = useHydrated();
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={hydrated ? formatFull(iso) : undefined} className={className}>
      {hydrated ? FORMATS[format](iso) : "…"}
    </time>
  );
}

/** The reader's zone and its offset at `iso`: "Europe/Berlin, UTC+1". */
export function ZoneName({ iso }: { iso?: string | null }) {
  return useHydrated() ? zoneLabel(iso ? new Date(iso) : undefined) : null;
}

/** "5 min ago", kept current as it ages. */
export function TimeAgo({ iso, className }: { iso: string | null | undefined; className?: string }) {
  const now = useNow();
  const hydrated = useHydrated();
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={hydrated ? formatFull(iso) : undefined} className={className}>
      {hydrated ? formatAgo(iso, now) : "…"}
    </time>
  );
}
