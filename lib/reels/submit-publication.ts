import { createHash, randomUUID } from "node:crypto";
import type { Producer } from "kafkajs";
import { ApiError, brokerUnavailable, validationError } from "../errors";
import type { Redis } from "../redis";
import { addToTenantIndex } from "../tenant-index";
import { TOPICS } from "../topics";
import { claimUpload } from "../uploads/upload-store";
import type { ConnectedAccounts } from "./connected-accounts";
import { parsePublishAt, publicationRequestRecord, type PublicationInput } from "./publication-input";
import type { PublicationEvent, PublicationView } from "./publication";
import { PUBLICATION_INDEX_BOUND, PUBLICATION_TTL_S, publicationKeys, publicationRecordSchema } from "./publication-record";
import { readPublication, toPublicationView } from "./read-publication";

export interface SubmitPublicationDeps {
  redis: Redis;
  producer: () => Promise<Producer>;
  /** The tenants' connected accounts. */
  connected: ConnectedAccounts;
  now?: () => Date;
}

export type SubmitPublicationResult = { created: boolean; publication: PublicationView };

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

// Creates the record (and claims the idempotency key, when given) unless the key is taken.
const CLAIM_PUBLICATION = `
if ARGV[2] == '1' then
  local existing = redis.call('GET', KEYS[3])
  if existing then return {0, existing} end
  redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[1])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return {1, ARGV[3]}`;

// Takes back a claim whose message never reached the broker, unless a worker already made it visible.
const RELEASE_CLAIM = `
if redis.call('HGET', KEYS[1], 'submitting') ~= '1' then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
return 1`;

/**
 * Accepts a publication: records it in Redis (QUEUED, or SCHEDULED with a publish_at), produces
 * it to reels.publish.requests keyed by account with acks -1, and only then makes it visible. If
 * the broker does not acknowledge, the record is taken back and the caller gets a 503.
 * The same Idempotency-Key with the same body answers the publication made the first time.
 */
export async function submitPublication(
  deps: SubmitPublicationDeps,
  tenantId: string,
  input: PublicationInput,
  options: { idempotencyKey?: string | null } = {},
): Promise<SubmitPublicationResult> {
  const now = (deps.now ?? (() => new Date()))();
  const idempotencyKey = options.idempotencyKey ?? undefined;
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw validationError([{ path: "Idempotency-Key", message: "1-255 visible ASCII characters" }]);
  }
  const account = await deps.connected.find(tenantId, input.account_id);
  if (!account) throw new ApiError("not-found", `No account ${input.account_id} for this API key.`);
  const publishAt = input.publish_at === undefined ? undefined : parsePublishAt(input.publish_at, now);

  const id = randomUUID();
  const status = publishAt ? "SCHEDULED" : "QUEUED";
  const fingerprint = createHash("sha256")
    .update(JSON.stringify([input.account_id, input.video_url ?? null, input.upload_id ?? null, input.caption ?? "", input.share_to_feed, publishAt?.toISOString() ?? null]))
    .digest("hex");
  const state: Record<string, string> = {
    publication_id: id,
    tenant_id: tenantId,
    account_id: account.accountId,
    video_url: input.video_url ?? "",
    upload_id: input.upload_id ?? "",
    caption: input.caption ?? "",
    share_to_feed: String(input.share_to_feed),
    publish_at: publishAt?.toISOString() ?? "",
    status,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    seq: "1",
    poll_count: "0",
    poll_round_start: "0",
    fingerprint,
    submitting: "1",
  };
  const first: PublicationEvent = {
    seq: 1,
    kind: "step",
    status,
    step: {
      at: now.toISOString(),
      step: publishAt ? "scheduled" : "queued",
      detail: publishAt ? `Accepted; publishes at ${publishAt.toISOString()}.` : "Accepted; waiting for a worker.",
    },
  };
  const idempotencyRedisKey = publicationKeys.idempotency(tenantId, createHash("sha256").update(idempotencyKey ?? "").digest("hex"));

  const [claimed, claimedId] = (await deps.redis.eval(
    CLAIM_PUBLICATION,
    3,
    publicationKeys.state(id),
    publicationKeys.events(id),
    idempotencyRedisKey,
    PUBLICATION_TTL_S,
    idempotencyKey === undefined ? "0" : "1",
    id,
    JSON.stringify(first),
    ...Object.entries(state).flat(),
  )) as [number, string];
  if (!claimed) return { created: false, publication: await existingFor(deps.redis, tenantId, claimedId, fingerprint) };
  if (input.upload_id) {
    const upload = await claimUpload(deps.redis, tenantId, input.upload_id, id);
    if (upload !== "claimed") {
      await deps.redis.eval(RELEASE_CLAIM, 3, publicationKeys.state(id), publicationKeys.events(id), idempotencyRedisKey, id).catch(() => {});
      const message = upload === "taken" ? "this upload is already used by another publication; upload the video again" : "no such upload (it expires a day after uploading if unused)";
      throw validationError([{ path: "upload_id", message }]);
    }
  }

  try {
    const producer = await deps.producer();
    await producer.send({
      topic: TOPICS.reels.name,
      acks: -1,
      messages: [publicationRequestRecord({ publication_id: id, tenant_id: tenantId, account_id: account.accountId })],
    });
  } catch {
    await deps.redis.eval(RELEASE_CLAIM, 3, publicationKeys.state(id), publicationKeys.events(id), idempotencyRedisKey, id).catch(() => {});
    throw brokerUnavailable("The publishing log is unreachable right now; the publication was not accepted. Try again shortly.");
  }

  const multi = addToTenantIndex(deps.redis.multi().hdel(publicationKeys.state(id), "submitting"), publicationKeys.tenantIndex(tenantId), id, now.getTime(), PUBLICATION_INDEX_BOUND, now.getTime());
  if (publishAt) multi.zadd(publicationKeys.scheduled, publishAt.getTime(), id);
  await multi.exec();
  const { submitting: _, ...visible } = state;
  return { created: true, publication: toPublicationView(publicationRecordSchema.parse(visible), [first]) };
}

async function existingFor(redis: Redis, tenantId: string, id: string, fingerprint: string): Promise<PublicationView> {
  const [storedFingerprint, submitting] = await redis.hmget(publicationKeys.state(id), "fingerprint", "submitting");
  if (submitting === "1") throw new ApiError("conflict", "A request with this Idempotency-Key is still being accepted; try again shortly.");
  if (storedFingerprint !== fingerprint) throw new ApiError("conflict", "This Idempotency-Key was used with a different body.");
  const existing = await readPublication(redis, tenantId, id);
  if (!existing) throw new ApiError("conflict", "This Idempotency-Key was used for a publication that no longer exists.");
  return existing;
}
