import { z } from "zod";
import { ApiError } from "../errors";
import { pageQuerySchema, readIndexPage, type IndexCursor } from "../paging";
import { forgetIndexed, listedIndex } from "../status-index";
import { PUBLICATION_STATUSES, type PublicationStatus } from "./status";
import { execPipeline, type Redis } from "../redis";
import type { PublicationEvent, PublicationView } from "./publication";
import {
  parseEvent,
  parsePublicationRecord,
  PUBLICATION_STATUS_INDEXING,
  publicationKeys,
  readPublicationRecord,
  recordedReelParameters,
  type PublicationRecord,
} from "./publication-record";

/** Reading publications for clients: one, a tenant's page of them, and the answer for an unknown id. */

export function toPublicationView(record: PublicationRecord, events: PublicationEvent[]): PublicationView {
  const reel = recordedReelParameters(record);
  return {
    publication_id: record.publication_id,
    tenant_id: record.tenant_id,
    account_id: record.account_id,
    video_url: record.video_url || null,
    upload_id: record.upload_id || null,
    caption: record.caption,
    share_to_feed: record.share_to_feed,
    cover_url: reel.cover_url ?? null,
    thumb_offset: reel.thumb_offset ?? null,
    audio_name: reel.audio_name ?? null,
    collaborators: reel.collaborators ?? [],
    location_id: reel.location_id ?? null,
    user_tags: reel.user_tags ?? [],
    trial_params: reel.trial_params ?? null,
    publish_at: record.publish_at || null,
    status: record.status,
    scheduled_reason: record.status === "SCHEDULED" ? (record.scheduled_reason ?? null) : null,
    container_id: record.container_id || null,
    last_status_code: record.last_status_code || null,
    polls: events.flatMap((e) => (e.kind === "poll" ? [{ ...e.poll, seq: e.seq }] : [])),
    steps: events.flatMap((e) => (e.kind === "step" ? [{ ...e.step, seq: e.seq }] : [])),
    post_id: record.post_id || null,
    permalink: record.permalink || null,
    error: record.error,
    warnings: record.warnings,
    created_at: record.created_at,
    updated_at: record.updated_at || record.created_at,
  };
}

export async function readEvents(redis: Redis, id: string): Promise<PublicationEvent[]> {
  return (await redis.lrange(publicationKeys.events(id), 0, -1))
    .map(parseEvent)
    .filter((e): e is PublicationEvent => !!e);
}

/**
 * The publication as `record` shows it: its timeline up to the record's last event, read after it
 * (the timeline only grows), so a write since (a client's retry) adds nothing to it.
 */
export async function readPublicationAsOf(redis: Redis, record: PublicationRecord): Promise<PublicationView> {
  const events = await readEvents(redis, record.publication_id);
  return toPublicationView(
    record,
    events.filter((e) => e.seq <= record.seq),
  );
}

/** A tenant's publication, or undefined when unknown, expired, not yet acknowledged, or another tenant's. */
export async function readPublication(
  redis: Redis,
  tenantId: string,
  id: string,
): Promise<PublicationView | undefined> {
  const record = await readPublicationRecord(redis, id);
  if (!record || record.tenant_id !== tenantId || record.submitting) return undefined;
  return toPublicationView(record, await readEvents(redis, id));
}

/** `?limit=&cursor=&status=` of GET /api/reels. */
export const publicationListQuerySchema = pageQuerySchema.extend({ status: z.enum(PUBLICATION_STATUSES).optional() });

/**
 * The tenant's publications, newest first, or only those in `status` (its index,
 * lib/status-index.ts); `cursor` is where the previous page ended (see lib/paging.ts). One that
 * left the status between the index read and its record's is left out of the page.
 */
export async function listPublications(
  redis: Redis,
  tenantId: string,
  opts: { limit: number; cursor?: IndexCursor; status?: PublicationStatus },
): Promise<{ data: PublicationView[]; next_cursor: string | null }> {
  const index = listedIndex(PUBLICATION_STATUS_INDEXING, tenantId, opts.status);
  const { entries: page, next } = await readIndexPage(redis, index, opts.limit, opts.cursor);
  const pipeline = redis.pipeline();
  for (const { id } of page) pipeline.hgetall(publicationKeys.state(id)).lrange(publicationKeys.events(id), 0, -1);
  const results = await execPipeline(pipeline);
  const data: PublicationView[] = [];
  const expired: string[] = [];
  page.forEach(({ id }, i) => {
    const hash = results[2 * i] as Record<string, string> | undefined;
    const record = parsePublicationRecord(hash);
    const events = ((results[2 * i + 1] as string[] | undefined) ?? [])
      .map(parseEvent)
      .filter((e): e is PublicationEvent => !!e);
    if (!hash?.publication_id) expired.push(id);
    else if (record?.tenant_id === tenantId && !record.submitting && (!opts.status || record.status === opts.status))
      data.push(toPublicationView(record, events));
  });
  await forgetIndexed(redis, PUBLICATION_STATUS_INDEXING, tenantId, expired);
  return { data, next_cursor: next };
}

export const publicationNotFound = () => new ApiError("not-found", "No such publication.");

/** A path id that is not a UUID names no publication: 404, the same answer as an unknown one. */
export function parsePublicationId(value: string): string {
  if (!z.uuid().safeParse(value).success) throw publicationNotFound();
  return value.toLowerCase();
}
