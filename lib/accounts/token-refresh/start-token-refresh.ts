import type { RunningConsumer, WorkerContext } from "../../worker/worker-context";
import { ConnectedAccounts } from "../connected-accounts";
import { loadAccountsKey } from "../token-cipher";
import { enrollInstagramAccounts } from "./token-refresh-queue";
import { startTokenRefreshSchedule } from "./token-refresh-schedule";

/** The worker's part of the token refresh: the schedule, with the worker's clients and settings. */
export async function startTokenRefresh(ctx: WorkerContext): Promise<RunningConsumer> {
  const { config, redis, log, workerId } = ctx;
  const accounts = new ConnectedAccounts(redis, loadAccountsKey(config), config.REEL_ACCOUNTS);
  const tenants = config.API_KEYS.map((k) => k.tenantId);
  // A worker that cannot enroll now still works the schedule; the next start enrolls again.
  try {
    const enrolled = await enrollInstagramAccounts(redis, accounts, tenants, Date.now());
    if (enrolled > 0) log("info", "Instagram-login accounts put on the token-refresh schedule", { enrolled });
  } catch (error) {
    log("warn", "could not put Instagram-login accounts on the token-refresh schedule", { error });
  }
  const schedule = startTokenRefreshSchedule({
    redis,
    accounts,
    fetch: (input, init) => fetch(input, init),
    version: config.GRAPH_VERSION,
    graphUrl: config.GRAPH_URL,
    instagramGraphUrl: config.INSTAGRAM_LOGIN.graphUrl,
    refreshBeforeMs: config.TOKEN_REFRESH_BEFORE_S * 1000,
    retryMs: config.TOKEN_REFRESH_INTERVAL_MS,
    intervalMs: config.TOKEN_REFRESH_INTERVAL_MS,
    owner: `${workerId}:${process.pid}`,
    log,
    now: Date.now,
  });
  return { stop: () => schedule.stop() };
}
