import { describeGraphError } from "./graph-error";

/**
 * Graph's rate-limit signals: the error codes that mean "too many calls" and the usage headers
 * (`X-App-Usage`, `X-Business-Use-Case-Usage`) that say how much of a limit is used and, per
 * account, how long until access comes back (`estimated_time_to_regain_access`, in minutes).
 */

/** App (4), user (17), page (32), custom (613) and Instagram (80002) rate limits: the codes GRAPH_ERRORS says to back off from. */
export function isRateLimitCode(code: number): boolean {
  return describeGraphError(code).action === "wait-rate-limit";
}

export interface GraphUsage {
  /** The highest share of any limit used, in percent. */
  percent: number;
  /** How long Graph says to wait before calling again; 0 when it names no wait. */
  regainAccessMs: number;
}

/** Reads both headers; undefined when neither is there or neither parses. */
export function readGraphUsage(headers: Headers): GraphUsage | undefined {
  const shares: Record<string, unknown>[] = [];
  const app = parse(headers.get("x-app-usage"));
  if (isRecord(app)) shares.push(app);
  const business = parse(headers.get("x-business-use-case-usage"));
  if (isRecord(business)) for (const entries of Object.values(business)) if (Array.isArray(entries)) shares.push(...entries.filter(isRecord));
  if (shares.length === 0) return undefined;
  let percent = 0;
  let regainMinutes = 0;
  for (const share of shares) {
    for (const field of ["call_count", "total_cputime", "total_time"]) percent = Math.max(percent, numberOf(share[field]));
    regainMinutes = Math.max(regainMinutes, numberOf(share.estimated_time_to_regain_access));
  }
  return { percent, regainAccessMs: regainMinutes * 60_000 };
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
