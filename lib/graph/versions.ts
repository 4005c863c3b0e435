import type { Log } from "../log";

/**
 * Graph API versions and their lives, one table read by the sandbox (which versions it serves),
 * the config (the default GRAPH_VERSION) and start-up (the warning before GRAPH_VERSION ends).
 *
 * Dates from Meta's changelog, https://developers.facebook.com/docs/graph-api/changelog/versions/
 * (its Graph API table: "Release Date" / "Expiration Date"), as graph-reference.md quotes them for
 * v19.0–v21.0 and v26.0. A version ends at the start of its expiration day (UTC: Meta gives no
 * hour). Every version older than the first row has ended too (the same table).
 */

export interface GraphVersion {
  version: string;
  /** YYYY-MM-DD. */
  released: string;
  /** YYYY-MM-DD; undefined while Meta's table says "TBD". */
  ends?: string;
}

export const GRAPH_VERSIONS: readonly GraphVersion[] = [
  { version: "v19.0", released: "2024-01-23", ends: "2026-05-21" },
  { version: "v20.0", released: "2024-05-21", ends: "2026-09-24" },
  { version: "v21.0", released: "2024-10-02", ends: "2027-01-21" },
  { version: "v22.0", released: "2025-01-21", ends: "2027-05-20" },
  { version: "v23.0", released: "2025-05-29", ends: "2027-10-08" },
  { version: "v24.0", released: "2025-10-08", ends: "2028-02-18" },
  { version: "v25.0", released: "2026-02-18", ends: "2028-07-29" },
  { version: "v26.0", released: "2026-07-29" },
];

/** The default GRAPH_VERSION: the newest in the table, live for at least the coming year (Meta keeps a version about two years). */
export const DEFAULT_GRAPH_VERSION = "v26.0";

/** Start-up warns when GRAPH_VERSION ends within this many days. */
export const VERSION_WARNING_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;
const VERSION_FORMAT = /^v(\d{1,2})\.(\d{1,2})$/;

const dateMs = (date: string) => Date.parse(`${date}T00:00:00Z`);

export type VersionLife =
  | { state: "live"; endsAt?: number }
  | { state: "ended"; endedAt?: number }
  /** Not released yet, or not a version Meta lists: Graph has no such path. */
  | { state: "unknown" };

/** Where a version is in its life at `now`. */
export function graphVersionLife(version: string, now: number): VersionLife {
  const row = GRAPH_VERSIONS.find((v) => v.version === version);
  if (row) {
    if (dateMs(row.released) > now) return { state: "unknown" };
    const end = row.ends === undefined ? undefined : dateMs(row.ends);
    if (end !== undefined && end <= now) return { state: "ended", endedAt: end };
    return end === undefined ? { state: "live" } : { state: "live", endsAt: end };
  }
  const oldest = GRAPH_VERSIONS[0]!;
  if (VERSION_FORMAT.test(version) && compareVersions(version, oldest.version) < 0) return { state: "ended" };
  return { state: "unknown" };
}

/** The versions Meta serves at `now`, oldest first. */
export function liveGraphVersions(now: number): string[] {
  return GRAPH_VERSIONS.filter((v) => graphVersionLife(v.version, now).state === "live").map((v) => v.version);
}

/**
 * What start-up says about GRAPH_VERSION: undefined while it is live for more than
 * VERSION_WARNING_DAYS; otherwise when it ends (or that it has), and which version to move to.
 */
export function graphVersionWarning(version: string, now: number): string | undefined {
  const life = graphVersionLife(version, now);
  const newest = liveGraphVersions(now).at(-1) ?? DEFAULT_GRAPH_VERSION;
  const move = `set GRAPH_VERSION to ${newest}`;
  if (life.state === "ended")
    return `GRAPH_VERSION ${version} has ended${life.endedAt ? ` (${isoDay(life.endedAt)})` : ""}: Meta answers its calls as the oldest live version does; ${move}`;
  if (life.state === "unknown")
    return `GRAPH_VERSION ${version} is not a released Graph API version Dispatch knows of; ${move} unless Meta has released it`;
  if (life.endsAt !== undefined && life.endsAt - now <= VERSION_WARNING_DAYS * DAY_MS) {
    const days = Math.ceil((life.endsAt - now) / DAY_MS);
    return `GRAPH_VERSION ${version} ends on ${isoDay(life.endsAt)} (in ${days} day${days === 1 ? "" : "s"}); ${move}`;
  }
  return undefined;
}

/** At start-up (web and worker): a warning in the log when GRAPH_VERSION ends soon or has ended. */
export function warnAboutGraphVersion(version: string, log: Log, now: number = Date.now()): void {
  const warning = graphVersionWarning(version, now);
  if (warning) log("warn", warning, { graph_version: version });
}

function compareVersions(a: string, b: string): number {
  const [, aMajor = "0", aMinor = "0"] = VERSION_FORMAT.exec(a) ?? [];
  const [, bMajor = "0", bMinor = "0"] = VERSION_FORMAT.exec(b) ?? [];
  return Number(aMajor) - Number(bMajor) || Number(aMinor) - Number(bMinor);
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
