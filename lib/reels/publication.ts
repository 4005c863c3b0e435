import { z } from "zod";
import { ApiError } from "../errors";
import { readIndexPage, type IndexCursor } from "../paging";
import { execPipeline, type Redis } from "../redis";
import type { GraphErrorAction } from "./graph-error";
import { MAX_SCHEDULE_AHEAD_DAYS } from "./publication-input";
import { isFinalPublication, PUBLICATION_STATUSES, type PublicationStatus } from "./status";

/**
 * A publication: one reel on its way through create → poll → publish. The Redis hash holds its
 * scalar state; every step and poll is an event in a list (the timeline, replayed to stream
 * clients) and on a pub/sub channel (the live part). The publish flow is the only writer once the
 * web side has recorded it, apart from a client's resume (TIMED_OUT only), cancel and edit (before
 * anything reached Graph), each a conditional write the flow cannot race.
 */

/** A container that is not published within 24 h of its creation expires (Graph's rule). */
export const CONTAINER_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** Every key of a publication lives this long after its last change: past the 75-day scheduling window. */
export const PUBLICATION_TTL_S = 90 * 86400;
/**
 * tenant:reels:{tenant}: a publication's last change comes at most a scheduling window (and a day
 * of running) after its creation, and its keys live PUBLICATION_TTL_S after that; older entries
 * are dead. A tenant lists at most maxEntries.
 */
export const PUBLICATION_INDEX_BOUND = { maxAgeMs: (PUBLICATION_TTL_S + (MAX_SCHEDULE_AHEAD_DAYS + 1) * 86400) * 1000, maxEntries: 100_000 };

export interface PublicationError {
  code: number | null;
  subcode: number | null;
  message: string;
  fbtrace_id: string | null;
  classification: GraphErrorAction;
  /** One sentence in plain words: what went wrong (e.g. "The video is 1.5 s long; reels must be 3 s to 15 min."). */
  headline: string;
  /** What to do about it. */
  remedy: string;
  /** The same as remedy, for clients that read it before remedy existed. */
  advice: string;
  /** The whole answer, when Graph's answer itself was the problem (a creation answer without an id). */
  response?: unknown;
}

export interface PollRecord {
  attempt: number;
  at: string;
  status_code: string | null;
  status: string | null;
}

export interface StepRecord {
  at: string;
  step: string;
  detail: string;
}

/** Fields of the view an event changed, so a stream client need not fetch the publication again. */
export interface PublicationChanges {
  container_id?: string;
  last_status_code?: string;
  post_id?: string;
  permalink?: string | null;
  error?: PublicationError | null;
}

/** One timeline entry, as stored and as streamed; `status` is the publication's status after it. */
export type PublicationEvent =
  | { seq: number; kind: "step"; status: PublicationStatus; step: StepRecord; changes?: PublicationChanges }
  | { seq: number; kind: "poll"; status: PublicationStatus; poll: PollRecord; changes?: PublicationChanges };

export interface PublicationView {
  publication_id: string;
  tenant_id: string;
  account_id: string;
  video_url: string;
  caption: string;
  share_to_feed: boolean;
  publish_at: string | null;
  status: PublicationStatus;
  container_id: string | null;
  last_status_code: string | null;
  /** Each with its event's seq: the timeline's order (times can tie within a millisecond). */
  polls: (PollRecord & { seq: number })[];
  steps: (StepRecord & { seq: number })[];
  post_id: string | null;
  permalink: string | null;
  error: PublicationError | null;
  created_at: string;
  updated_at: string;
}

export const publicationKeys = {
  state: (id: string) => `reel:publication:${id}`,
  events: (id: string) => `reel:events:${id}`,
  /** Pub/sub channel of live events. */
  stream: (id: string) => `reel:stream:${id}`,
  /** The worker running the publication, renewed while it runs. */
  lease: (id: string) => `reel:lease:${id}`,
  tenantIndex: (tenantId: string) => `tenant:reels:${tenantId}`,
  idempotency: (tenantId: string, keyDigest: string) => `reel:idempotency:${tenantId}:${keyDigest}`,
  /** Publications waiting for their publish_at, scored by it (ms). */
  scheduled: "reels:scheduled",
};

export function parseEvent(raw: string): PublicationEvent | undefined {
  try {
    const value = JSON.parse(raw) as PublicationEvent;
    return typeof value.seq === "number" && (value.kind === "step" || value.kind === "poll") ? value : undefined;
  } catch {
    return undefined;
  }
}

// Appends one event with the next seq, applies the hash fields, refreshes the expiry, publishes
// live. Refuses when the record is gone (a late writer never resurrects a deleted publication),
// when its status is final (ARGV[4]: nothing is written after PUBLISHED, FAILED or CANCELLED), or
// when an expected field moved on (ARGV[5]: how many field/value pairs follow).
const APPEND_EVENT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local status = redis.call('HGET', KEYS[1], 'status')
for final in string.gmatch(ARGV[4], '%S+') do
  if status == final then return -1 end
end
local expected = tonumber(ARGV[5])
for i = 6, 5 + 2 * expected, 2 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 1] then return -1 end
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local event = '{"seq":' .. seq .. ',' .. string.sub(ARGV[3], 2)
local first = 6 + 2 * expected
if #ARGV >= first then redis.call('HSET', KEYS[1], unpack(ARGV, first)) end
redis.call('RPUSH', KEYS[2], event)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[1], event)
return seq`;

const FINAL_STATUSES = PUBLICATION_STATUSES.filter((s) => isFinalPublication(s)).join(" ");

export type EventBody = { kind: "step"; step: StepRecord } | { kind: "poll"; poll: PollRecord };

export interface EventWrite {
  /** The publication's status after the event. */
  status: PublicationStatus;
  body: EventBody;
  /** Hash fields written with it (status and updated_at are added). */
  fields?: Record<string, string>;
  changes?: PublicationChanges;
  /** Write only if these hash fields still hold these values ("" for an absent field), e.g. `{ status: "TIMED_OUT" }`. */
  expect?: Record<string, string>;
}

/**
 * Records a step or a poll together with the state it leads to, in one script: the hash, the
 * timeline and the live channel never disagree. Returns the event's seq; 0 if the record is gone,
 * -1 if it is final or a field was not the expected value.
 */
export async function appendEvent(redis: Redis, id: string, write: EventWrite): Promise<number> {
  const { status, body, changes } = write;
  const at = body.kind === "step" ? body.step.at : body.poll.at;
  const event = { kind: body.kind, status, ...(body.kind === "step" ? { step: body.step } : { poll: body.poll }), ...(changes ? { changes } : {}) };
  const hash = { ...write.fields, status, updated_at: at };
  return (await redis.eval(
    APPEND_EVENT,
    2,
    publicationKeys.state(id),
    publicationKeys.events(id),
    publicationKeys.stream(id),
    PUBLICATION_TTL_S,
    JSON.stringify(event),
    FINAL_STATUSES,
    Object.keys(write.expect ?? {}).length,
    ...Object.entries(write.expect ?? {}).flat(),
    ...Object.entries(hash).flat(),
  )) as number;
}

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
    video_url: state.video_url,
    caption: state.caption ?? "",
    share_to_feed: state.share_to_feed !== "false",
    publish_at: state.publish_at || null,
    status: state.status as PublicationStatus,
    container_id: state.container_id || null,
    last_status_code: state.last_status_code || null,
    polls: events.flatMap((e) => (e.kind === "poll" ? [{ ...e.poll, seq: e.seq }] : [])),
    steps: events.flatMap((e) => (e.kind === "step" ? [{ ...e.step, seq: e.seq }] : [])),
    post_id: state.post_id || null,
    permalink: state.permalink || null,
    error: errorView(state.error),
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
