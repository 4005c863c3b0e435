import type { ChainableCommander } from "ioredis";
import { z } from "zod";
import {
  SCHEDULED_REASONS,
  type PollRecord,
  type PublicationChanges,
  type PublicationError,
  type PublicationEvent,
  type StepRecord,
} from "./publication";
import { MAX_SCHEDULE_AHEAD_DAYS } from "./publication-input";
import { isFinalPublication, PUBLICATION_STATUSES, type PublicationStatus } from "./status";
import { jsonField, parseHashRecord } from "../hash-record";
import { parseReelGraphParams, type ReelParameters } from "../graph/reel-parameters";
import { REEL_PARAMETER_NAMES } from "../graph/reel-parameter-limits";
import { execPipeline, type Redis } from "../redis";
import { syncStatusIndex, type StatusIndexing } from "../status-index";

/**
 * A publication's record: one reel on its way through create → poll → publish. The Redis hash
 * holds its scalar state; every step and poll is an event in a list (the timeline, replayed to
 * stream clients) and on a pub/sub channel (the live part). The publish flow is the only writer
 * once the web side has recorded it, apart from a client's resume (TIMED_OUT only), cancel and
 * edit (before anything reached Graph), each a conditional write the flow cannot race.
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
export const PUBLICATION_INDEX_BOUND = {
  maxAgeMs: (PUBLICATION_TTL_S + (MAX_SCHEDULE_AHEAD_DAYS + 1) * 86400) * 1000,
  maxEntries: 100_000,
};

/** A tenant's publications per status, beside its index (lib/status-index.ts); every status write moves them. */
export const PUBLICATION_STATUS_INDEXING: StatusIndexing = {
  tenantIndex: (tenantId: string) => publicationKeys.tenantIndex(tenantId),
  statuses: PUBLICATION_STATUSES,
  indexBound: PUBLICATION_INDEX_BOUND,
};

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

/** The hash says "not known" with an empty string or no field at all. */
const text = z.string().default("");
const count = z.coerce.number().int().default(0);
/** Set to "1", or absent. */
const flag = z.preprocess((v) => v === "1", z.boolean());
/** An error recorded before headline and remedy existed reads with its message and advice in their place. */
const storedError = z.preprocess((raw) => {
  const error = jsonField(raw) as Partial<PublicationError> | undefined;
  if (typeof error?.message !== "string" || typeof error.advice !== "string") return null;
  return { ...error, headline: error.headline ?? error.message, remedy: error.remedy ?? error.advice };
}, z.custom<PublicationError | null>());

/**
 * The hash at reel:publication:{id}, declared once: writers spell its fields through
 * `PublicationHash` (a misspelt field does not compile), readers parse it with
 * `parsePublicationRecord`. The Lua scripts here and in submit-publication name a few fields too.
 */
export const publicationRecordSchema = z.object({
  publication_id: z.string().min(1),
  tenant_id: z.string(),
  account_id: z.string(),
  video_url: text,
  upload_id: text,
  caption: text,
  share_to_feed: z.preprocess((v) => v !== "false", z.boolean()),
  /** The further reel parameters, as Graph's form takes them (reel-parameters.ts); "" when not given. */
  cover_url: text,
  thumb_offset: text,
  audio_name: text,
  collaborators: text,
  location_id: text,
  user_tags: text,
  trial_params: text,
  /** The client's time, or while SCHEDULED by Dispatch when it tries again; "" when it waits for someone. */
  publish_at: text,
  status: z.enum(PUBLICATION_STATUSES),
  scheduled_reason: z.enum(SCHEDULED_REASONS).optional().catch(undefined),
  created_at: z.string(),
  updated_at: text,
  /** The last event's seq. */
  seq: count,
  /** What makes two submissions with the same Idempotency-Key the same (see submit-publication). */
  fingerprint: text,
  /** Claimed, but the broker has not acknowledged it yet: invisible to reads and lists. */
  submitting: flag,
  /** The worker running it; "" once a run ended or handed it on. */
  active_run: text,
  container_id: text,
  container_created_at: text,
  /** A resumable container's upload address, and whether all the bytes reached it. */
  upload_uri: text,
  upload_done: flag,
  /** A retried publication's earlier container, read before another is made. */
  retry_of_container: text,
  poll_count: count,
  /** poll_count when the current round of polling began (a resume gives a fresh budget). */
  poll_round_start: count,
  /** Past the round's first polls, a container still IN_PROGRESS is read again no sooner than this (ISO); "" before. */
  watch_at: text,
  last_status_code: text,
  rate_limited_waits: count,
  post_id: text,
  permalink: text,
  error: storedError,
  warnings: z.preprocess((raw) => jsonField(raw) ?? [], z.array(z.string()).catch([])),
  /** The updated_at of the last final status added to the tenant's usage aggregates (lib/usage/record-usage.ts). */
  usage_counted: text,
  /** The updated_at of the last settled write announced on reels.publication.events (publish/announce.ts). */
  announced: text,
});

export type PublicationRecord = z.infer<typeof publicationRecordSchema>;
export type PublicationField = keyof PublicationRecord;
/** Fields as the hash holds them: strings, written only under their declared names. */
export type PublicationHash = Partial<Record<PublicationField, string>>;

/** Parses a hash (HGETALL's answer); undefined when there is no publication there, or not a whole one. */
export function parsePublicationRecord(hash: Record<string, string> | null | undefined): PublicationRecord | undefined {
  return parseHashRecord(publicationRecordSchema, "publication_id", hash);
}

export async function readPublicationRecord(redis: Redis, id: string): Promise<PublicationRecord | undefined> {
  return parsePublicationRecord(await redis.hgetall(publicationKeys.state(id)));
}

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
  /** Hash fields written with it (status and updated_at are added; an undo gives updated_at back its earlier value). */
  fields?: PublicationHash;
  changes?: PublicationChanges;
  /** Write only if these hash fields still hold these values ("" for an absent field), e.g. `{ status: "TIMED_OUT" }`. */
  expect?: PublicationHash;
  /** Writes over a final status: a retry of a FAILED publication, which `expect` must name. */
  reopen?: boolean;
  /** Queued on the write's MULTI after it (a final status's usage count): they run even if the write is refused. */
  alsoQueue?: (multi: ChainableCommander) => ChainableCommander;
}

/**
 * Records a step or a poll together with the state it leads to, in one script: the hash, the
 * timeline and the live channel never disagree. Returns the event's seq; 0 if the record is gone,
 * -1 if it is final or a field was not the expected value.
 */
export async function appendEvent(redis: Redis, id: string, write: EventWrite): Promise<number> {
  const [seq] = await execPipeline(queueAppendEvent(redis, id, write));
  return seq as number;
}

/**
 * The same write, with the record read back in its MULTI: the publication as this write left it,
 * whatever a client writes next (a retry of a FAILED one). Undefined when the write was refused.
 */
export async function appendEventReadingRecord(
  redis: Redis,
  id: string,
  write: EventWrite,
): Promise<PublicationRecord | undefined> {
  const results = await execPipeline(queueAppendEvent(redis, id, write).hgetall(publicationKeys.state(id)));
  if ((results[0] as number) <= 0) return undefined;
  return parsePublicationRecord(results.at(-1) as Record<string, string>);
}

/** appendEvent's MULTI, not yet sent: the script's answer (the seq) comes first. */
function queueAppendEvent(redis: Redis, id: string, write: EventWrite): ChainableCommander {
  const { status, body, changes } = write;
  const at = body.kind === "step" ? body.step.at : body.poll.at;
  const event = {
    kind: body.kind,
    status,
    ...(body.kind === "step" ? { step: body.step } : { poll: body.poll }),
    ...(changes ? { changes } : {}),
  };
  const hash = { status, updated_at: at, ...write.fields };
  const append = redis
    .multi()
    .eval(
      APPEND_EVENT,
      2,
      publicationKeys.state(id),
      publicationKeys.events(id),
      publicationKeys.stream(id),
      PUBLICATION_TTL_S,
      JSON.stringify(event),
      write.reopen && write.expect?.status ? "" : FINAL_STATUSES,
      Object.keys(write.expect ?? {}).length,
      ...Object.entries(write.expect ?? {}).flat(),
      ...Object.entries(hash).flat(),
    );
  // The status indexes follow the status the record holds after the script, in the same MULTI.
  const indexed = syncStatusIndex(append, PUBLICATION_STATUS_INDEXING, publicationKeys.state(id), id);
  return write.alsoQueue ? write.alsoQueue(indexed) : indexed;
}

/** Whether a TIMED_OUT publication's container may still be published (Graph expires it 24 h after creation). */
export function containerAlive(state: PublicationRecord, now: number): boolean {
  const createdAt = Date.parse(state.container_created_at);
  return !!state.container_id && !Number.isNaN(createdAt) && now < createdAt + CONTAINER_LIFETIME_MS;
}

/** The reel parameters the publication was submitted with, read back from their Graph form. */
export function recordedReelParameters(record: PublicationRecord): ReelParameters {
  const stored: Record<string, string> = {};
  for (const name of REEL_PARAMETER_NAMES) if (record[name]) stored[name] = record[name];
  const parsed = parseReelGraphParams(stored);
  // Written only from validated input, so a record that does not parse was changed by hand: send nothing rather than guess.
  return parsed.ok ? parsed.parameters : {};
}
