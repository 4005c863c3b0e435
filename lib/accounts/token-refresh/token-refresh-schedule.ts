import { keepLease, takeLease } from "../../lease";
import { abortableSleep } from "../../sleep";
import { refreshAccountToken, type TokenRefreshDeps } from "./refresh-account-token";
import { claimDueTokenRefreshes, scheduleTokenRefresh, tokenRefreshKeys } from "./token-refresh-queue";

export interface TokenRefreshScheduleOptions extends TokenRefreshDeps {
  /** TOKEN_REFRESH_INTERVAL_MS: how often the schedule is looked at. */
  intervalMs: number;
  /** Names this scheduler in the lease (the worker's id). */
  owner: string;
}

export interface TokenRefreshSchedule {
  /** Finishes the account under way, stops, and gives the lease up for another worker to take. */
  stop(): Promise<void>;
}

/** The lease outlives a dead holder this long; its holder renews it every third of it. */
const LEASE_MS = 30_000;
/** An account claimed by a scheduler that died comes due again after this; a refresh takes seconds. */
const CLAIM_MS = 5 * 60_000;
const BATCH = 50;

/**
 * Runs the token-refresh schedule every `intervalMs` while this process holds its lease: any
 * number of workers start it, one works it at a time across the cluster, and another takes over
 * within LEASE_MS of its holder's end. The schedule lives in Redis, so a restart loses nothing.
 */
export function startTokenRefreshSchedule(options: TokenRefreshScheduleOptions): TokenRefreshSchedule {
  const stopping = new AbortController();
  let lease: { release(): Promise<void> } | undefined;
  let leaseLost = false;

  const holdLease = async (): Promise<boolean> => {
    if (lease && !leaseLost) return true;
    await lease?.release();
    lease = undefined;
    if ((await takeLease(options.redis, tokenRefreshKeys.lease, options.owner, LEASE_MS)) !== "") return false;
    leaseLost = false;
    lease = keepLease(options.redis, tokenRefreshKeys.lease, options.owner, LEASE_MS, {
      // No consumer group to keep alive: the lease is the only heartbeat.
      heartbeat: async () => {},
      onLost: () => {
        leaseLost = true;
      },
    });
    return true;
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        if (await holdLease()) await refreshDueTokens(options, stopping.signal);
      } catch (error) {
        options.log("warn", "could not work the token-refresh schedule; tried again at the next check", { error });
      }
      // Cut short only by stop(), which the loop's condition then sees.
      await abortableSleep(options.intervalMs, stopping.signal).catch(() => {});
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
      await lease?.release();
    },
  };
}

/** Works the accounts due now, a batch at a time, until none is due or the scheduler stops. */
async function refreshDueTokens(deps: TokenRefreshDeps, stopping: AbortSignal): Promise<void> {
  for (;;) {
    const due = await claimDueTokenRefreshes(deps.redis, deps.now(), BATCH, CLAIM_MS);
    for (const [i, accountId] of due.entries()) {
      if (stopping.aborted) {
        // Handed back due at once, for whichever worker holds the lease next.
        for (const left of due.slice(i)) await scheduleTokenRefresh(deps.redis, left, deps.now());
        return;
      }
      // One account's failure (Redis away mid-way) leaves it claimed: it comes due again when the claim runs out.
      await refreshAccountToken(deps, accountId).catch((error) =>
        deps.log("error", "could not refresh an account's token", { account_id: accountId, error }),
      );
    }
    if (due.length < BATCH) return;
  }
}
