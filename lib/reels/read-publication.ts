import { z } from "zod";
import { ApiError } from "../errors";
import { readIndexPage, type IndexCursor } from "../paging";
import { execPipeline, type Redis } from "../redis";
import type { PublicationError, PublicationEvent, PublicationView, ScheduledReason } from "./publication";
import { parseEvent, publicationKeys } from "./publication-record";
import type { PublicationStatus } from "./status";

/** Reading publications for clients: one, a tenant's page of them, and the answer for an unknown id. */

/** An error recorded before headline and remedy existed reads with its message and advice in their place. */
function errorView(stored: string | undefined): PublicationError | null {
  if (!stored) return null;
  const error = JSON.parse(stored) as Partial<PublicationError> & Pick<PublicationError, "message" | "advice">;
  return { ...error, headline: error.headline ?? error.message, remedy: error.remedy ?? error.advice } as PublicationError;
}

export function toPublicationView(state: Record<string, string>, events: PublicationEvent[]): PublicationView {
  return {
    publication_id: state.publication_id,
    tenant_id: state.tenant_id,
    account_id: state.account_id,
    video_url: state.video_url || null,
    upload_id: state.upload_id || null,
    caption: state.caption ?? "",
    share_to_feed: state.share_to_feed !== "false",
    publish_at: state.publish_at || null,
    status: state.status as PublicationStatus,
    scheduled_reason: state.status === "SCHEDULED" ? ((state.scheduled_reason || null) as ScheduledReason | null) : null,
    container_id: state.container_id || null,
    last_status_code: state.last_status_code || null,
    polls: events.flatMap((e) => (e.kind === "poll" ? [{ ...e.poll, seq: e.seq }] : [])),
    steps: events.flatMap((e) => (e.kind === "step" ? [{ ...e.step, seq: e.seq }] : [])),
    post_id: state.post_id || null,
    permalink: state.permalink || null,
    error: errorView(state.error),
    warnings: state.warnings ? (JSON.parse(state.warnings) as string[]) : [],
    created_at: state.created_at,
    updated_at: state.updated_at || state.created_at,
  };
}

export async function readEvents(redis: Redis, id: string): Promise<PublicationEvent[]> {
  return (await redis.lrange(publicationKeys.events(id), 0, -1)).map(parseEvent).filter((e): e is PublicationEvent => !!e);
}

/** A tenant's publication, or undefined when unknown, expired, not yet acknowledged, or another tenant's. */
export async function readPublication(redis: Redis, tenantId: string, id: string): Promise<PublicationView | undefined> {
  const state = await redis.hgetall(publicationKeys.state(id));
  if (!state.publication_id || state.tenant_id !== tenantId || state.submitting === "1") return undefined;
  return toPublicationView(state, await readEvents(redis, id));
}

/** The tenant's publications, newest first; `cursor` is where the previous page ended (see lib/paging.ts). */
export async function listPublications(redis: Redis, tenantId: string, opts: { limit: number; cursor?: IndexCursor }): Promise<{ data: PublicationView[]; next_cursor: string | null }> {
  const { entries: page, next } = await readIndexPage(redis, publicationKeys.tenantIndex(tenantId), opts.limit, opts.cursor);
  const pipeline = redis.pipeline();
  for (const { id } of page) pipeline.hgetall(publicationKeys.state(id)).lrange(publicationKeys.events(id), 0, -1);
  const results = await execPipeline(pipeline);
  const data: PublicationView[] = [];
  const expired: string[] = [];
  page.forEach(({ id }, i) => {
    const state = results[2 * i] as Record<string, string> | undefined;
    const events = ((results[2 * i + 1] as string[] | undefined) ?? []).map(parseEvent).filter((e): e is PublicationEvent => !!e);
    if (!state?.publication_id) expired.push(id);
    else if (state.tenant_id === tenantId && state.submitting !== "1") data.push(toPublicationView(state, events));
  });
  if (expired.length) await redis.zrem(publicationKeys.tenantIndex(tenantId), ...expired);
  return { data, next_cursor: next };
}

export const publicationNotFound = () => new ApiError("not-found", "No such publication.");

/** A path id that is not a UUID names no publication: 404, the same answer as an unknown one. */
export function parsePublicationId(value: string): string {
  if (!z.uuid().safeParse(value).success) throw publicationNotFound();
  return value.toLowerCase();
}
