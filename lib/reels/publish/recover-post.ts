import { publicationKeys } from "../publication-record";
import type { PublicationOutcome, PublicationRun } from "./publication-run";

/**
 * Lost-post recovery: the container says PUBLISHED but this worker has no answer for it (a
 * publish went through and its answer was lost, or a worker died right after it). The reel is out:
 * never publish again; find the post if it can be found.
 */
export async function alreadyPublished(run: PublicationRun): Promise<PublicationOutcome> {
  const known = await run.deps.redis.hget(publicationKeys.state(run.id), "post_id");
  if (known)
    return run.published(
      known,
      undefined,
      `The container was already published as post ${known}; not publishing again.`,
    );
  const post = await findPost(run);
  const detail = post
    ? `The container was already published (an earlier answer was lost); found post ${post.id}. Not publishing again.`
    : "The container was already published (an earlier answer was lost), but the post could not be identified among the account's media. Not publishing again.";
  return run.published(post?.id ?? null, post?.permalink ?? null, detail);
}

/** Graph does not link a container to its post: look for a post with this caption made after the container. */
async function findPost(run: PublicationRun): Promise<{ id: string; permalink: string | null } | undefined> {
  try {
    const media = await run.graph.listMedia(run.account, "id,caption,timestamp,permalink", 50, run.signal);
    const since = Date.parse(run.record.container_created_at) - 60_000;
    const caption = run.record.caption.trim();
    const matches = media
      .filter(
        (m) => (m.caption ?? "").trim() === caption && (Number.isNaN(since) || parseGraphTime(m.timestamp) >= since),
      )
      .sort((a, b) => parseGraphTime(a.timestamp) - parseGraphTime(b.timestamp));
    const first = matches[0];
    return first ? { id: first.id, permalink: first.permalink ?? null } : undefined;
  } catch (error) {
    // Not finding it is an answer too: published, post unknown.
    if (run.signal.aborted) throw run.signal.reason ?? error;
    return undefined;
  }
}

/** Graph writes 2024-05-01T12:00:00+0000, which Date.parse does not read everywhere. */
function parseGraphTime(value: string | undefined): number {
  if (!value) return Number.NaN;
  return Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"));
}
