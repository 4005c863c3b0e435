import type { Message, Producer } from "kafkajs";
import { ApiError, brokerUnavailable } from "../errors";
import type { Redis } from "../redis";
import { redisScript } from "../redis-script";
import { ADD_TO_TENANT_INDEX_LUA, tenantIndexArgs, type IndexBound } from "../tenant-index";
import { statusIndexArgs, SYNC_STATUS_INDEX_LUA, type StatusIndexing } from "../status-index";
import { GCRA_FUNCTION, gcraArgs, overLimit, tenantRateLimit } from "../rate-limit";
import { sendBatched } from "./send-batched";

/**
 * How Dispatch accepts work (a generation job, a reel publication): claim → produce → reveal,
 * written once. Each feature keeps its own record and fingerprint and describes its work with a
 * `WorkKind`; the idempotency semantics are the same for every kind:
 *
 * - A submission is named by an idempotency key: the client's own (`job_id`, which is also the
 *   job's id; a reel's `Idempotency-Key` header, per tenant) or, without one, the new work's id,
 *   so it is always new.
 * - The claim (one Lua script) takes one from the tenant's submission budget (429 when there is
 *   none left, and nothing written) and writes the record, marked `submitting`, only if the key
 *   is free.
 *   The work is then produced to its topic with acks -1 (batched with the others of the same turn
 *   of the event loop) and only then revealed: `submitting` cleared, the work added to its
 *   tenant's index. Until then no read or list shows it.
 * - If the broker does not acknowledge (or a step before it fails), the claim is taken back
 *   (record, companion keys, key, and what `beforeProduce` took, through `releaseAlso`) unless it
 *   was revealed meanwhile, and the caller gets 503 with Retry-After: nothing is handed out that
 *   is not on the log, and the same key works again.
 * - The same key again, by the same tenant with the same fingerprint (what the client chose, not
 *   the defaults filled in), answers the existing work (200) and produces nothing. While the first
 *   request is still being accepted, it answers 409 "still being accepted; try again shortly":
 *   that work may yet be taken back. Another fingerprint or another tenant is 409.
 * - A worker that gets work still marked `submitting` (its submitter died, or lost Redis, between
 *   the broker's acknowledgement and the reveal) reveals it with `revealWork` before running it.
 * - The reveal also puts the work in the index of the status its record holds then, beside the
 *   tenant's index (lib/status-index.ts); every later status write moves it.
 */
export interface WorkKind<View> extends StatusIndexing {
  /** Names the work in answers: "job", "publication". */
  noun: string;
  topic: string;
  /** The record, a hash: its fields name the tenant `tenant_id`; the kit adds `fingerprint` and `submitting`. */
  recordKey: (id: string) => string;
  /** Lists written with the record and taken back with it (a timeline), in the order of `Submission.companions`. */
  companionKeys?: (id: string) => string[];
  tenantIndex: (tenantId: string) => string;
  indexBound: IndexBound;
  /** Every key the claim writes expires after this (a later write of the feature may renew it). */
  ttlS: number;
  /** The work as GET answers it; undefined unless it exists, is revealed and is the tenant's. */
  read: (redis: Redis, tenantId: string, id: string) => Promise<View | undefined>;
  /** The 503's detail when the broker does not acknowledge. */
  unreachable: string;
}

export interface Submission {
  tenantId: string;
  /** The new work's id. */
  id: string;
  /** How answers name the key: "job_id 0b0e…", "This Idempotency-Key". */
  keyName: string;
  /** The Redis key holding the client's idempotency key, when it is not the id itself. */
  idempotencyKey?: string;
  fingerprint: string;
  /** The record's fields as the claim writes them; undefined ones are left out. */
  fields: Record<string, string | undefined>;
  /** One value appended to each of the kind's companion lists. */
  companions?: string[];
  message: Message & { value: string };
  createdAtMs: number;
  /** Runs with the claim held, before the produce (a reel claims its upload): a throw takes the claim back and is the answer. */
  beforeProduce?: () => Promise<void>;
  /** Undoes `beforeProduce` when the claim is taken back after it ran (a reel gives its upload back). */
  releaseAlso?: () => Promise<void>;
  /** One more sorted set the reveal adds the id to, in its own step (a scheduled reel's entry in the schedule). */
  revealAlso?: AlsoIndexed;
}

export interface AcceptDeps {
  redis: Redis;
  producer: () => Promise<Producer>;
  /**
   * The tenant's submissions a minute (RATE_LIMIT_PER_MINUTE; unset or 0: no limit), taken in the
   * claim's own step: one round trip less than a separate check, and a submission refused before
   * its claim (a bad body, an unknown model or account) takes nothing from the budget.
   */
  submitsPerMinute?: number;
}

export type Accepted<View> = { created: true } | { created: false; existing: View };

// KEYS: the tenant's submission budget, the record, the idempotency key (the record again when the
// id is the key), the companion lists. ARGV: the budget's now, interval and burst (interval 0: no
// budget), ttl, id, the number of companion values, those values, the record's field/value pairs.
// Over budget it answers {-1, ms to wait} and writes nothing; the budget counts every other answer.
const CLAIM = redisScript(`${GCRA_FUNCTION}
if tonumber(ARGV[2]) > 0 then
  local wait = gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), true)
  if wait > 0 then return {-1, tostring(wait)} end
end
if KEYS[3] == KEYS[2] then
  if redis.call('EXISTS', KEYS[2]) == 1 then return {0, ARGV[5]} end
else
  local holder = redis.call('GET', KEYS[3])
  if holder then return {0, holder} end
  redis.call('SET', KEYS[3], ARGV[5], 'EX', ARGV[4])
end
local lists = tonumber(ARGV[6])
redis.call('HSET', KEYS[2], unpack(ARGV, 7 + lists))
redis.call('EXPIRE', KEYS[2], ARGV[4])
for i = 1, lists do
  redis.call('RPUSH', KEYS[3 + i], ARGV[6 + i])
  redis.call('EXPIRE', KEYS[3 + i], ARGV[4])
end
return {1, ARGV[5]}`);

// The claim's KEYS but the budget; ARGV[1] the id. Revealed work (no `submitting`) is on the log and stays.
const RELEASE = `
if redis.call('HGET', KEYS[1], 'submitting') ~= '1' then return 0 end
redis.call('DEL', KEYS[1])
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
if KEYS[2] ~= KEYS[1] and redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`;

/** Claims, produces and reveals one submission, or answers the work its key already names. See WorkKind. */
export async function acceptWork<View>(
  deps: AcceptDeps,
  kind: WorkKind<View>,
  work: Submission,
): Promise<Accepted<View>> {
  const { redis } = deps;
  const recordKey = kind.recordKey(work.id);
  const keys = [recordKey, work.idempotencyKey ?? recordKey, ...(kind.companionKeys?.(work.id) ?? [])];
  const companions = work.companions ?? [];
  const fields = Object.entries({ ...work.fields, fingerprint: work.fingerprint, submitting: "1" }).flatMap(
    ([field, value]) => (value === undefined ? [] : [field, value]),
  );
  const budget = tenantRateLimit(work.tenantId, "submit", deps.submitsPerMinute ?? 0);
  const [claimed, holder] = (await CLAIM.run(
    redis,
    [budget?.key ?? recordKey, ...keys],
    [
      ...(budget ? gcraArgs(budget.perMinute, Date.now()) : [0, 0, 0]),
      kind.ttlS,
      work.id,
      companions.length,
      ...companions,
      ...fields,
    ],
  )) as [number, string];
  if (claimed === -1) throw overLimit(budget!, Number(holder));
  if (!claimed) return { created: false, existing: await existingWork(redis, kind, work, holder) };

  // Redis away as well: the claim, never revealed, stays invisible until its keys expire. Answers
  // whether it was taken back (work a worker revealed meanwhile is on the log and stays).
  const release = async () => (await redis.eval(RELEASE, keys.length, ...keys, work.id).catch(() => 0)) === 1;
  if (work.beforeProduce) {
    try {
      await work.beforeProduce();
    } catch (error) {
      await release();
      throw error;
    }
  }
  try {
    await sendBatched(await deps.producer(), kind.topic, work.message);
  } catch {
    if ((await release()) && work.releaseAlso) await work.releaseAlso();
    throw brokerUnavailable(kind.unreachable);
  }
  await revealWork(redis, kind, work.tenantId, work.id, work.createdAtMs, work.createdAtMs, work.revealAlso);
  return { created: true };
}

/** A sorted set, and the score the id gets there. */
export interface AlsoIndexed {
  key: string;
  score: number;
}

// KEYS: the record, the tenant index, and `also`'s key if there is one. ARGV: the id, its creation
// time (its score in the indexes), tenantIndexArgs, statusIndexArgs, `also`'s score. One script, not
// a MULTI of seven commands: this runs for every submission, and each command sent costs the web
// process its encoding, a promise and its answer (scripts/bench/NOTES.md, eleventh session).
const REVEAL = redisScript(`${ADD_TO_TENANT_INDEX_LUA}${SYNC_STATUS_INDEX_LUA}
redis.call('HDEL', KEYS[1], 'submitting')
addToTenantIndex(KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
syncStatusIndex(KEYS[1], ARGV[1], ARGV[6], ARGV[7], ARGV[8])
if KEYS[3] then redis.call('ZADD', KEYS[3], ARGV[9], ARGV[1]) end
return 1`);

/**
 * Makes accepted work visible to reads and lists, in one step: `submitting` cleared, the id added
 * to its tenant's index (trimmed to its bound) and to the index of the status its record holds,
 * and to `also` if given.
 */
export async function revealWork(
  redis: Redis,
  kind: WorkKind<unknown>,
  tenantId: string,
  id: string,
  createdAtMs: number,
  nowMs = Date.now(),
  also?: AlsoIndexed,
): Promise<void> {
  await REVEAL.run(
    redis,
    [kind.recordKey(id), kind.tenantIndex(tenantId), ...(also ? [also.key] : [])],
    [
      id,
      createdAtMs,
      ...tenantIndexArgs(kind.indexBound, nowMs),
      ...statusIndexArgs(kind),
      ...(also ? [also.score] : []),
    ],
  );
}

async function existingWork<View>(redis: Redis, kind: WorkKind<View>, work: Submission, id: string): Promise<View> {
  const [tenantId, fingerprint, submitting] = await redis.hmget(
    kind.recordKey(id),
    "tenant_id",
    "fingerprint",
    "submitting",
  );
  const gone = () => new ApiError("conflict", `${work.keyName} was used for a ${kind.noun} that no longer exists.`);
  if (tenantId === null) throw gone();
  if (tenantId !== work.tenantId || fingerprint !== work.fingerprint)
    throw new ApiError("conflict", `${work.keyName} is already used by a different request.`);
  if (submitting === "1")
    throw new ApiError("conflict", `${work.keyName} belongs to a request still being accepted; try again shortly.`);
  const existing = await kind.read(redis, work.tenantId, id);
  if (!existing) throw gone();
  return existing;
}
