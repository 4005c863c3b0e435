import type { Redis } from "../redis";
import { connectedAccountKeys } from "../accounts/connected-accounts";
import { appendEvent, publicationKeys } from "./publication-record";

/**
 * An account was connected again: its publications that waited for it are due now. Each is
 * rescheduled to now only if it still waits for this (a cancel or an edit meanwhile wins), and the
 * scheduler of due publications puts it back on the log.
 */
export async function releaseWaitingPublications(redis: Redis, accountId: string, now: number): Promise<number> {
  const key = connectedAccountKeys.waiting(accountId);
  const ids = await redis.smembers(key);
  let released = 0;
  const at = new Date(now).toISOString();
  for (const id of ids) {
    // Taken out first: if the publication has to wait again, it adds itself back after this.
    await redis.srem(key, id);
    const seq = await appendEvent(redis, id, {
      status: "SCHEDULED",
      expect: { status: "SCHEDULED", scheduled_reason: "needs_reconnect" },
      body: {
        kind: "step",
        step: { at, step: "reconnected", detail: "The account was connected again; the publication goes on." },
      },
      fields: { publish_at: at, scheduled_reason: "" },
      changes: { publish_at: at, scheduled_reason: null },
    });
    if (seq > 0) {
      await redis.zadd(publicationKeys.scheduled, now, id);
      released++;
    }
  }
  return released;
}
