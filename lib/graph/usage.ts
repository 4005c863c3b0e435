import { describeGraphError } from "./error-table";

/**
 * Graph's rate-limit signals: the error codes that mean "too many calls" and the usage headers
 * (`X-App-Usage`, `X-Business-Use-Case-Usage`) that say how much of a limit is used and, per
 * account, how long until access comes back (`estimated_time_to_regain_access`, in minutes).
 * Meta sends the headers on answers, not only on errors; the client reads them on every one
 * (request.ts) and the pacer acts on them (pacing.ts).
 */

/** App (4), user (17), page (32), custom (613) and Instagram (80002) rate limits: the codes GRAPH_ERRORS says to back off from (4/2207051 is not one). */
export function isRateLimitCode(code: number, subcode?: number | null): boolean {
  return describeGraphError(code, subcode).action === "wait-rate-limit";
}

export interface UsageShare {
  /** The highest of the figures (call_count, total_cputime, total_time), in percent. */
  percent: number;
  /** How long Graph says to wait; 0 when it names no wait. */
  regainAccessMs: number;
}

export interface GraphUsage {
  /** The highest share of any limit used, in percent: app and accounts together. */
  percent: number;
  /** How long Graph says to wait before calling again; 0 when it names no wait. */
  regainAccessMs: number;
  /** X-App-Usage: the app's share of its limit; absent without the header. */
  app?: { percent: number };
  /** X-Business-Use-Case-Usage, by the id it names (the Instagram account, or a Page): the highest of its entries. */
  accounts: Record<string, UsageShare>;
}

const FIGURES = ["call_count", "total_cputime", "total_time"] as const;

/** Reads both headers; undefined when neither is there or neither parses. */
export function readGraphUsage(headers: Headers): GraphUsage | undefined {
  const app = parse(headers.get("x-app-usage"));
  const business = parse(headers.get("x-business-use-case-usage"));
  if (!isRecord(app) && !isRecord(business)) return undefined;
  const usage: GraphUsage = { percent: 0, regainAccessMs: 0, accounts: {} };
  if (isRecord(app)) {
    usage.app = { percent: highest(app) };
    usage.percent = usage.app.percent;
    usage.regainAccessMs = regainOf(app);
  }
  if (isRecord(business)) {
    for (const [id, entries] of Object.entries(business)) {
      if (!Array.isArray(entries)) continue;
      const share: UsageShare = { percent: 0, regainAccessMs: 0 };
      for (const entry of entries.filter(isRecord)) {
        share.percent = Math.max(share.percent, highest(entry));
        share.regainAccessMs = Math.max(share.regainAccessMs, regainOf(entry));
      }
      usage.accounts[id] = share;
      usage.percent = Math.max(usage.percent, share.percent);
      usage.regainAccessMs = Math.max(usage.regainAccessMs, share.regainAccessMs);
    }
  }
  return usage;
}

function highest(share: Record<string, unknown>): number {
  return Math.max(0, ...FIGURES.map((field) => numberOf(share[field])));
}

/** estimated_time_to_regain_access is in minutes. */
function regainOf(share: Record<string, unknown>): number {
  return numberOf(share.estimated_time_to_regain_access) * 60_000;
}

function parse(value: string | null): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberOf(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : 0;
}
