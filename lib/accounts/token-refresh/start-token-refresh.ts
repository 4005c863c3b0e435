import type { RunningConsumer, WorkerContext } from "../../worker/worker-context";
import { ConnectedAccounts } from "../connected-accounts";
import { loadAccountsKey } from "../token-cipher";
import { startTokenRefreshSchedule } from "./token-refresh-schedule";

/** The worker's part of the token refresh: the schedule, with the worker's clients and settings. */
export async function startTokenRefresh(ctx: WorkerContext): Promise<RunningConsumer> {
  const { config, redis, log, workerId } = ctx;
  const schedule = startTokenRefreshSchedule({
    redis,
    accounts: new ConnectedAccounts(redis, loadAccountsKey(config), config.REEL_ACCOUNTS),
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
