import { createHash, randomUUID } from "node:crypto";
import { acceptWork, type AcceptDeps, type WorkKind } from "../accept/accept-work";
import { ApiError, validationError } from "../errors";
import type { Redis } from "../redis";
import { TOPICS } from "../topics";
import { claimUpload, releaseUpload } from "../uploads/upload-store";
import type { ConnectedAccounts } from "../accounts/connected-accounts";
import { parsePublishAt, publicationRequestRecord, type PublicationInput } from "./publication-input";
import type { PublicationEvent, PublicationView } from "./publication";
import {
  PUBLICATION_STATUS_INDEXING,
  PUBLICATION_TTL_S,
  publicationKeys,
  publicationRecordSchema,
  type PublicationHash,
} from "./publication-record";
import { readPublication, toPublicationView } from "./read-publication";
import { reelGraphParams } from "../graph/reel-parameters";
import { uploadsByUrl, type UploadUrls } from "./upload-for-graph";

export interface SubmitPublicationDeps extends AcceptDeps {
  /** The tenants' connected accounts. */
  connected: ConnectedAccounts;
  /** Whether Graph could fetch an upload from PUBLIC_URL (Instagram Login accounts); the web server always passes it. */
  uploadUrls?: Pick<UploadUrls, "unreachableReason">;
  now?: () => Date;
}

export type SubmitPublicationResult = { created: boolean; publication: PublicationView };

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A publication as lib/accept takes it: its Idempotency-Key, when given, is its idempotency key. */
export const PUBLICATION_WORK: WorkKind<PublicationView> = {
  noun: "publication",
  topic: TOPICS.reels.name,
  recordKey: publicationKeys.state,
  companionKeys: (id) => [publicationKeys.events(id)],
  ...PUBLICATION_STATUS_INDEXING,
  ttlS: PUBLICATION_TTL_S,
  read: readPublication,
  unreachable: "The publishing log is unreachable right now; the publication was not accepted. Try again shortly.",
};

/**
 * Accepts a publication (see lib/accept for the protocol and its idempotency): records it in Redis
 * (QUEUED, or SCHEDULED with a publish_at), produces it to reels.publish.requests keyed by account
 * with acks -1, and only then makes it visible. If the broker does not acknowledge, the record is
 * taken back and the caller gets a 503. The same Idempotency-Key with the same body answers the
 * publication made the first time.
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
  // Refused now rather than failed later: Meta would fetch the file from PUBLIC_URL (the run checks again).
  const unreachable =
    input.upload_id && uploadsByUrl(account.login) ? deps.uploadUrls?.unreachableReason(account) : undefined;
  if (unreachable) throw validationError([{ path: "upload_id", message: unreachable }]);
  const publishAt = input.publish_at === undefined ? undefined : parsePublishAt(input.publish_at, now);

  const id = randomUUID();
  const { state, first, fingerprint } = newPublication({
    id,
    tenantId,
    accountId: account.accountId,
    input,
    publishAt,
    now,
  });

  const uploadId = input.upload_id;
  const accepted = await acceptWork(deps, PUBLICATION_WORK, {
    tenantId,
    id,
    keyName: "This Idempotency-Key",
    idempotencyKey:
      idempotencyKey === undefined
        ? undefined
        : publicationKeys.idempotency(tenantId, createHash("sha256").update(idempotencyKey).digest("hex")),
    fingerprint,
    fields: state,
    companions: [JSON.stringify(first)],
    message: publicationRequestRecord({ publication_id: id, tenant_id: tenantId, account_id: account.accountId }),
    createdAtMs: now.getTime(),
    beforeProduce: uploadId ? () => claimPublicationUpload(deps.redis, tenantId, uploadId, id) : undefined,
    // A refused publication must not keep its upload: the retry its 503 invites claims it again.
    releaseAlso: uploadId ? () => releaseUpload(deps.redis, uploadId, id) : undefined,
    revealAlso: publishAt ? { key: publicationKeys.scheduled, score: publishAt.getTime() } : undefined,
  });
  if (!accepted.created) return { created: false, publication: accepted.existing };
  return { created: true, publication: toPublicationView(publicationRecordSchema.parse(state), [first]) };
}

/** A new publication's record, its first event (queued or scheduled) and the fingerprint of what was asked. */
function newPublication(p: {
  id: string;
  tenantId: string;
  accountId: string;
  input: PublicationInput;
  publishAt: Date | undefined;
  now: Date;
}) {
  const { id, tenantId, accountId, input, publishAt, now } = p;
  const status = publishAt ? "SCHEDULED" : "QUEUED";
  const reelParams = reelGraphParams(input);
  // Only when given, so a body without them keeps the fingerprint it had before they existed.
  const asked = Object.keys(reelParams).length > 0 ? [reelParams] : [];
  const fingerprint = createHash("sha256")
    .update(
      JSON.stringify([
        input.account_id,
        input.video_url ?? null,
        input.upload_id ?? null,
        input.caption ?? "",
        input.share_to_feed,
        publishAt?.toISOString() ?? null,
        ...asked,
      ]),
    )
    .digest("hex");
  const state = {
    publication_id: id,
    tenant_id: tenantId,
    account_id: accountId,
    video_url: input.video_url ?? "",
    upload_id: input.upload_id ?? "",
    caption: input.caption ?? "",
    share_to_feed: String(input.share_to_feed),
    ...reelParams,
    publish_at: publishAt?.toISOString() ?? "",
    status,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    seq: "1",
    poll_count: "0",
    poll_round_start: "0",
  } satisfies PublicationHash;
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
  return { state, first, fingerprint };
}

async function claimPublicationUpload(
  redis: Redis,
  tenantId: string,
  uploadId: string,
  publicationId: string,
): Promise<void> {
  const upload = await claimUpload(redis, tenantId, uploadId, publicationId);
  if (upload === "claimed") return;
  const message =
    upload === "taken"
      ? "this upload is already used by another publication; upload the video again"
      : "no such upload (it expires a day after uploading if unused)";
  throw validationError([{ path: "upload_id", message }]);
}
