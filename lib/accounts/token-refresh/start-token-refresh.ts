import type { Config } from "../../config";
import type { Log } from "../../log";
import type { Redis } from "../../redis";
import type { GraphPacer } from "../../graph/pacing";
import type { RunningSchedule, WorkerContext } from "../../worker/worker-context";
import type { ConnectedAccounts } from "../connected-accounts";
import { enrollInstagramAccounts } from "./token-refresh-queue";
import { startTokenRefreshSchedule, type TokenRefreshScheduleOptions } from "./token-refresh-schedule";

/** The worker's part of the token refresh: the schedule, with the worker's clients and settings. */
export async function startTokenRefresh(ctx: WorkerContext): Promise<RunningSchedule> {
  const { config, redis, log, workerId, services } = ctx;
  const { accounts, pacer } = services;
  const tenants = config.API_KEYS.map((k) => k.tenantId);
  // A worker that cannot enroll now still works the schedule; the next start enrolls again.
  try {
    const enrolled = await enrollInstagramAccounts(redis, accounts, tenants, Date.now());
    if (enrolled > 0) log("info", "Instagram-login accounts put on the token-refresh schedule", { enrolled });
  } catch (error) {
    log("warn", "could not put Instagram-login accounts on the token-refresh schedule", { error });
  }
  const schedule = startTokenRefreshSchedule(
    tokenRefreshOptions(config, { redis, accounts, pacer, log }, `${workerId}:${process.pid}`),
  );
  return { stop: () => schedule.stop() };
}

/**
 * The schedule's settings from the configuration: where tokens go, how early, how often. `pacer`
 * is the publishing calls' (one per process, its state in Redis), so a refresh waits while they do
 * and they learn from its answer.
 */
export function tokenRefreshOptions(
  config: Config,
  clients: { redis: Redis; accounts: ConnectedAccounts; pacer: GraphPacer; log: Log },
  owner: string,
): TokenRefreshScheduleOptions {
  return {
    ...clients,
    fetch: (input, init) => fetch(input, init),
    version: config.GRAPH_VERSION,
    graphUrl: config.GRAPH_URL,
    instagramGraphUrl: config.INSTAGRAM_LOGIN.graphUrl,
    refreshBeforeMs: config.TOKEN_REFRESH_BEFORE_S * 1000,
    retryMs: config.TOKEN_REFRESH_INTERVAL_MS,
    intervalMs: config.TOKEN_REFRESH_INTERVAL_MS,
    owner,
    now: Date.now,
  };
}
