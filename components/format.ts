/** Display formats shared by the dashboard's pages. */

const number = new Intl.NumberFormat("en-US");

export const formatNumber = (n: number | null | undefined) => (n === null || n === undefined ? "—" : number.format(n));

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCost(cost: { currency: string; amount: number } | null | undefined): string {
  if (!cost) return "—";
  const digits = cost.amount === 0 ? 2 : cost.amount < 0.01 ? 6 : 4;
  return new Intl.NumberFormat("en-US", { style: "currency", currency: cost.currency, minimumFractionDigits: 2, maximumFractionDigits: digits }).format(cost.amount);
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleString("en-GB", { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** "12 s ago", "5 min ago", or a date for anything older than a day. */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return formatDateTime(iso);
}
