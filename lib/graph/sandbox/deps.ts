import type { Dispatcher } from "undici";
import type { Config } from "../../config";
import type { Log } from "../../log";
import type { HostLookup } from "../../net/public-agent";
import type { Redis } from "../../redis";

/** What the sandbox needs from its host process: clients and a clock, passed in so tests use real or fake ones. */
export interface SandboxDeps {
  redis: Redis;
  config: Pick<
    Config,
    | "GRAPH_VERSION"
    | "REEL_ACCOUNTS"
    | "SANDBOX_PROCESSING_MS"
    | "SANDBOX_PUBLISH_LIMIT"
    | "ALLOW_PRIVATE_URLS"
    | "PORT"
    | "DATA_DIR"
    | "SANDBOX_ADMIN_TOKEN"
    | "INSTAGRAM_LOGIN"
    | "FACEBOOK_LOGIN"
  >;
  /** Milliseconds since the epoch. Container ages, expiry and quotas follow this clock. */
  now: () => number;
  log: Log;
  /** How the video fetcher resolves names before it checks the answers; the system's resolver when absent. */
  lookup?: HostLookup;
  /** Replaces the video fetcher's connection policy (tests: a connection that never opens). */
  dispatcher?: Dispatcher;
  limits?: Partial<SandboxLimits>;
  /**
   * The tenant whose Dispatch dashboard session the request carries (the web app reads its
   * session cookie); undefined when signed out. The login dialogs serve only a signed-in tenant,
   * and offer it only the sandbox accounts no other tenant holds: without this, they serve no one.
   */
  sessionTenant?: (request: Request) => Promise<string | undefined>;
}

export interface SandboxLimits {
  /** Largest video the sandbox downloads (Meta's newer page: 300 MB). */
  maxVideoBytes: number;
  /** Whole download, redirects included. */
  fetchTimeoutMs: number;
  maxRedirects: number;
  /** Containers an account may create in a moving 24 h. */
  containersPer24h: number;
  /** How often a processing attempt proves it is alive. */
  heartbeatMs: number;
  /** An IN_PROGRESS container whose heartbeat is older than this is taken over (its process died). */
  staleAfterMs: number;
  /** Attempts before a container that keeps killing its processors ends in ERROR. */
  maxAttempts: number;
  /** Downloads running at once, all accounts together; the others wait for a slot. */
  maxConcurrentDownloads: number;
  /** Kept videos (FINISHED and PUBLISHED containers) of one account, in bytes. */
  maxAccountBytes: number;
  /** Kept videos of all accounts, in bytes. */
  maxStoreBytes: number;
  /** A published reel, its records and its video are kept this long after publishing. */
  mediaTtlMs: number;
  /** A reel's insights answer an empty `data` this long after publishing (SANDBOX_INSIGHTS_LAG_MS; Meta's lag is up to 48 h). */
  insightsLagMs: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  maxVideoBytes: 300 * 1024 * 1024,
  fetchTimeoutMs: 120_000,
  maxRedirects: 5,
  containersPer24h: 400,
  heartbeatMs: 5_000,
  staleAfterMs: 20_000,
  maxAttempts: 5,
  maxConcurrentDownloads: 4,
  maxAccountBytes: 1024 * 1024 * 1024,
  maxStoreBytes: 4 * 1024 * 1024 * 1024,
  mediaTtlMs: 30 * 24 * 60 * 60 * 1000,
  insightsLagMs: 60_000,
};

export function limitsOf(deps: SandboxDeps): SandboxLimits {
  return { ...DEFAULT_LIMITS, ...deps.limits };
}

export const DAY_MS = 24 * 60 * 60 * 1000;
