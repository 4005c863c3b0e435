import { ApiError } from "../errors";
import type { Redis } from "../redis";
import type { PublicationView } from "./publication";
import { appendEvent, publicationKeys } from "./publication-record";
import { publicationNotFound, readPublication } from "./read-publication";
import { queueReelUsage } from "../usage/record-usage";

/**
 * Withdraws a publication before anything reached Graph: while SCHEDULED, or QUEUED before a
 * container exists. Each check-and-write is one script, so a worker picking the publication up
 * meanwhile either moved it on first (409) or finds it CANCELLED and writes nothing more (every
 * write of the flow is refused once the status is final). The cancel is added to the tenant's
 * usage in the same MULTI as the write (a cancelled SCHEDULED publication has no message for a
 * worker to count it by), unless `recordUsage` is false (USAGE_AGGREGATES).
 */
export async function cancelPublication(
  deps: { redis: Redis; now?: () => number; recordUsage?: boolean },
  tenantId: string,
  id: string,
): Promise<PublicationView> {
  const view = await readPublication(deps.redis, tenantId, id);
  if (!view) throw publicationNotFound();
  const now = (deps.now ?? Date.now)();
  const at = new Date(now).toISOString();
  const facts = { tenantId, accountId: view.account_id, status: "CANCELLED", at: now, submitToLiveMs: null } as const;
  const write = (from: "SCHEDULED" | "QUEUED") =>
    appendEvent(deps.redis, id, {
      status: "CANCELLED",
      body: {
        kind: "step",
        step: {
          at,
          step: "cancelled",
          detail:
            from === "SCHEDULED"
              ? `Cancelled before its publish_at ${view.publish_at}.`
              : "Cancelled before a container was created.",
        },
      },
      fields: { active_run: "" },
      expect: from === "SCHEDULED" ? { status: "SCHEDULED" } : { status: "QUEUED", container_id: "" },
      alsoQueue: deps.recordUsage === false ? undefined : (multi) => queueReelUsage(multi, id, at, facts, now),
    });
  let seq = await write("SCHEDULED");
  if (seq <= 0) seq = await write("QUEUED");
  if (seq <= 0) throw notCancellable(await deps.redis.hget(publicationKeys.state(id), "status"));
  await deps.redis.zrem(publicationKeys.scheduled, id);
  return (await readPublication(deps.redis, tenantId, id)) ?? view;
}

function notCancellable(status: string | null): ApiError {
  if (!status) return publicationNotFound();
  if (status === "CANCELLED") return new ApiError("conflict", "The publication is already cancelled.");
  return new ApiError(
    "conflict",
    `Only a SCHEDULED publication, or a QUEUED one before its container is created, can be cancelled; this one is ${status}${status === "QUEUED" ? " with a container" : ""}.`,
  );
}
