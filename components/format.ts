/** Display formats shared by the dashboard's pages: every time in the browser's own zone, one way. */

const number = new Intl.NumberFormat("en-US");

export const formatNumber = (n: number | null | undefined) => (n === null || n === undefined ? "—" : number.format(n));

/** "1 token", "2,048 tokens". */
export const plural = (n: number, one: string, many = `${one}s`) => `${number.format(n)} ${n === 1 ? one : many}`;

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCost(cost: { currency: string; amount: number } | null | undefined): string {
  if (!cost) return "—";
  const digits = cost.amount === 0 ? 2 : cost.amount < 0.01 ? 6 : 4;
  return new Intl.NumberFormat("en-US", {
    style: "currency",
    currency: cost.currency,
    minimumFractionDigits: 2,
    maximumFractionDigits: digits,
  }).format(cost.amount);
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** "24 Nov, 14:05", with the year when it is not this year's. */
export function formatDateTime(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return "—";
  const date = new Date(iso);
  const year = date.getFullYear() === now.getFullYear() ? undefined : "numeric";
  return date.toLocaleString("en-GB", { day: "numeric", month: "short", year, hour: "2-digit", minute: "2-digit" });
}

/** The whole moment with its zone, for a title on hover: "Tuesday 24 November 2026, 14:05:09 CET". */
export function formatFull(iso: string | null | undefined): string | undefined {
  if (!iso) return undefined;
  const date = new Date(iso);
  const day = date.toLocaleDateString("en-GB", { weekday: "long", day: "numeric", month: "long", year: "numeric" });
  const time = date.toLocaleTimeString("en-GB", {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
  });
  return `${day}, ${time} (${zoneLabel(date)})`;
}

/** The browser's zone and its offset at `at`: "Europe/Berlin, UTC+1", "Asia/Kolkata, UTC+5:30". */
export function zoneLabel(at = new Date()): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const minutes = -at.getTimezoneOffset();
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  const offset =
    minutes === 0
      ? "UTC"
      : `UTC${sign}${Math.floor(abs / 60)}${abs % 60 ? `:${String(abs % 60).padStart(2, "0")}` : ""}`;
  return zone === offset || zone === "Etc/UTC" ? offset : `${zone}, ${offset}`;
}

/** "12 s ago", "5 min ago", or a date for anything older than a day; "in 3 h" for a time ahead. */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const diff = Math.round((now - Date.parse(iso)) / 1000);
  if (diff < -60) {
    const ahead = -diff;
    if (ahead < 3600) return `in ${Math.round(ahead / 60)} min`;
    if (ahead < 86400) return `in ${Math.round(ahead / 3600)} h`;
    return formatDateTime(iso);
  }
  const seconds = Math.max(0, diff);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return formatDateTime(iso);
}
