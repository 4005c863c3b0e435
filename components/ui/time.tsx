"use client";

import { useEffect, useState } from "react";
import { formatAgo, formatDateTime, formatFull, formatTime } from "../format";

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
export function Time({ iso, format = "datetime", className }: { iso: string | null | undefined; format?: keyof typeof FORMATS; className?: string }) {
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={formatFull(iso)} className={className}>
      {FORMATS[format](iso)}
    </time>
  );
}

/** "5 min ago", kept current as it ages. */
export function TimeAgo({ iso, className }: { iso: string | null | undefined; className?: string }) {
  const now = useNow();
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={formatFull(iso)} className={className}>
      {formatAgo(iso, now)}
    </time>
  );
}
