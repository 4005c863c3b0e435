import { ApiError } from "../errors";
import type { Redis } from "../redis";
import type { PublicationView } from "./publication";
import { appendEvent, publicationKeys, type PublicationHash } from "./publication-record";
import { publicationNotFound, readPublication } from "./read-publication";
import { parsePublishAt, type PublicationUpdate } from "./publication-input";

/**
 * Changes a SCHEDULED publication's time or caption. The write holds only while it is still
 * SCHEDULED (one script), and the worker's move to QUEUED holds only while publish_at and caption
 * are what it read, so an edit and a due publication never cross. A new publish_at moves the
 * scheduler's due index with it.
 */
export async function updatePublication(
  deps: { redis: Redis; now?: () => Date },
  tenantId: string,
  id: string,
  update: PublicationUpdate,
): Promise<PublicationView> {
  const now = (deps.now ?? (() => new Date()))();
  const view = await readPublication(deps.redis, tenantId, id);
  if (!view) throw publicationNotFound();
  const publishAt = update.publish_at === undefined ? undefined : parsePublishAt(update.publish_at, now);

  const fields: PublicationHash = {};
  const changed: string[] = [];
  if (publishAt) {
    fields.publish_at = publishAt.toISOString();
    changed.push(`publish_at ${view.publish_at} → ${fields.publish_at}`);
  }
  if (update.caption !== undefined) {
    fields.caption = update.caption;
    changed.push("caption");
  }
  const seq = await appendEvent(deps.redis, id, {
    status: "SCHEDULED",
    body: { kind: "step", step: { at: now.toISOString(), step: "updated", detail: `Changed: ${changed.join("; ")}.` } },
    fields,
    expect: { status: "SCHEDULED" },
  });
  if (seq <= 0) {
    const status = await deps.redis.hget(publicationKeys.state(id), "status");
    if (!status) throw publicationNotFound();
    throw new ApiError("conflict", `Only a SCHEDULED publication can be changed; this one is ${status}.`);
  }
  if (publishAt) await deps.redis.zadd(publicationKeys.scheduled, publishAt.getTime(), id);
  return (await readPublication(deps.redis, tenantId, id)) ?? view;
}
