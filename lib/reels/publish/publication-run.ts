import type { ChainableCommander } from "ioredis";
import type { Producer } from "kafkajs";
import type { Log } from "../../log";
import type { Redis } from "../../redis";
import { recordPublished } from "../../accounts/account-quota";
import type { AccountLogin, ConnectedAccounts } from "../../accounts/connected-accounts";
import type { GraphAccount, GraphClient } from "../../graph/client";
import type { GraphHosts } from "../../graph/hosts";
import type { PreflightResult, PreflightSource } from "../../video/preflight-video";
import type { PublicationChanges, PublicationError } from "../publication";
import {
  appendEvent,
  appendEventReadingRecord,
  type EventBody,
  type PublicationHash,
  type PublicationRecord,
} from "../publication-record";
import type { PublicationStatus } from "../status";
import type { UploadUrls } from "../upload-for-graph";
import { DEFAULT_RETRY, type RetryPolicy } from "./graph-retry";
import { registerPublishedReel } from "../insights/insights-store";
import { queueReelUsage } from "../../usage/record-usage";
import { reelFactsFromRecord } from "../../usage/usage-facts";

export interface PublicationDeps {
  redis: Redis;
  /** Announces what a publication's owner hears of on reels.publication.events (webhooks read it). */
  producer: Producer;
  /** Graph per host: each account is called at the host it was connected through (lib/graph/hosts.ts). */
  graphs: GraphHosts;
  /** Connected accounts: the token to publish with, and where a refused one is marked needs_reconnect. */
  connected: ConnectedAccounts;
  log: Log;
  workerId: string;
  /** The first round of status reads: every pollIntervalMs, pollAttempts times (REEL_POLL_INTERVAL_MS × REEL_POLL_ATTEMPTS: 5 s × 30). */
  pollIntervalMs: number;
  pollAttempts: number;
  /** After that round, a container still IN_PROGRESS is read once per this (REEL_WATCH_INTERVAL_MS, Meta's advice: a minute) until it settles or expires. */
  watchIntervalMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Backoff after Graph's rate-limit signals: jittered, doubling from baseMs up to maxMs, or longer if Graph says so. */
  rateLimit?: Partial<Omit<RetryPolicy, "retries">>;
  leaseMs?: number;
  /** How long a message may wait for its submitter to finish recording it. */
  submitSettleMs?: number;
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where uploaded videos live (DATA_DIR): a publication with an upload_id sends its file to Graph. */
  dataDir?: string;
  /**
   * The signed addresses under PUBLIC_URL Graph fetches an upload from, for accounts connected with
   * Instagram Login (upload-for-graph.ts); without them such a publication fails before any Graph call.
   */
  uploadUrls?: UploadUrls;
  /** Checks the video before a container is created (against the real Graph API; see preflight-video.ts). */
  preflight?: (source: PreflightSource, signal: AbortSignal) => Promise<PreflightResult>;
  /** Add each settled publication to the usage aggregates (USAGE_AGGREGATES; on unless false), as jobs are. */
  recordUsage?: boolean;
}

/** Meta advises reading a container's status about once a minute. */
export const DEFAULT_WATCH_INTERVAL_MS = 60_000;

/**
 * `deferred`, `timed-out`: waiting for a time or a client; `skipped`: nothing to do (already settled
 * or unknown); `handed-back`: stopped half-way, for another worker to resume. Every outcome but the
 * last lets the consumer commit the message's offset.
 */
export type PublicationOutcome = "published" | "failed" | "timed-out" | "deferred" | "skipped" | "handed-back";

/** The record is gone, or a client moved it on (cancelled it) under the run: nothing more to write. */
export class RecordClosed extends Error {}

/**
 * One run of the flow under the lease: what the steps share (the record as read, the account, the
 * container, the poll count) and the one way they write, `step`/`poll` through appendEvent. The
 * final writes (published, failed, timed out) are here too, so every step ends the same way; each
 * keeps the record it left, which the run announces.
 */
export class PublicationRun {
  readonly retry: RetryPolicy;
  readonly watchIntervalMs: number;
  record!: PublicationRecord;
  status: PublicationStatus = "QUEUED";
  account!: GraphAccount;
  /** How the account was connected, as read by this run: it decides how an uploaded file reaches Graph. */
  login: AccountLogin = "token";
  /** The account's stored Graph host (null: GRAPH_URL). */
  accountGraphUrl: string | null = null;
  /** The account's Graph host's client, chosen with its token. */
  graph!: GraphClient;
  /** The connection whose token this run uses: a refusal marks the account only if it is still this one. */
  tokenVersion = 0;
  containerId = "";
  pollCount = 0;
  /** While a slow container is watched: no status read before this (ms); 0 before the watch begins. */
  watchAt = 0;
  /** A worker ran it before this one and stopped (its active_run was left set). */
  interrupted = false;
  /**
   * The uploaded file of an upload_id publication, once found: sent to the container's address for
   * its bytes (`resumable`), or fetched by Graph from a signed address under PUBLIC_URL (`url`).
   */
  upload: { path: string; size: number; file: string; via: "resumable" | "url" } | undefined;
  uploadUri = "";
  publishFailures = 0;
  /** The record as this run's final write left it (read in that write's MULTI); undefined before one. */
  settled: PublicationRecord | undefined;

  constructor(
    readonly deps: PublicationDeps,
    readonly id: string,
    readonly signal: AbortSignal,
    readonly now: () => number,
    readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ) {
    this.retry = { ...DEFAULT_RETRY, ...deps.retry };
    this.watchIntervalMs = deps.watchIntervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
  }

  /** Whether the round's first polls are used up: from here on the container is watched. */
  get watching(): boolean {
    return this.pollCount - this.record.poll_round_start >= this.deps.pollAttempts;
  }

  iso(): string {
    return new Date(this.now()).toISOString();
  }

  step(
    status: PublicationStatus,
    step: string,
    detail: string,
    fields: PublicationHash = {},
    changes?: PublicationChanges,
  ): Promise<void> {
    return this.write({ kind: "step", step: { at: this.iso(), step, detail } }, status, fields, changes);
  }

  async write(
    body: EventBody,
    status: PublicationStatus,
    fields: PublicationHash,
    changes?: PublicationChanges,
  ): Promise<void> {
    // A worker that lost its lease must not write: the one that holds it now owns the timeline.
    if (this.signal.aborted) throw this.signal.reason;
    const seq = await appendEvent(this.deps.redis, this.id, { status, body, fields, changes });
    if (seq <= 0) throw new RecordClosed();
    this.status = status;
  }

  /**
   * A final write: a step, like `step`, keeping the record as it left it (read back in the write's
   * MULTI) as `settled`, so what the run announces is this write even if a client retries at once.
   * Its usage is counted in the same MULTI (as a cancel's is): counted after it, from a read of the
   * record, a retry in between left the outcome uncounted.
   */
  private async settle(
    status: PublicationStatus,
    step: string,
    detail: string,
    fields: PublicationHash,
    changes: PublicationChanges,
  ): Promise<void> {
    if (this.signal.aborted) throw this.signal.reason;
    const at = this.iso();
    const body: EventBody = { kind: "step", step: { at, step, detail } };
    const facts =
      this.deps.recordUsage === false ? undefined : reelFactsFromRecord({ ...this.record, status, updated_at: at });
    const alsoQueue = facts && ((multi: ChainableCommander) => queueReelUsage(multi, this.id, at, facts));
    const record = await appendEventReadingRecord(this.deps.redis, this.id, {
      status,
      body,
      fields,
      changes,
      alsoQueue,
    });
    if (!record) throw new RecordClosed();
    this.status = status;
    this.settled = record;
  }

  async published(
    postId: string | null,
    permalink: string | null | undefined,
    detail: string,
  ): Promise<PublicationOutcome> {
    let link = permalink ?? null;
    if (postId && permalink === undefined) {
      try {
        link = (await this.graph.readMedia(this.account, postId, "id,permalink", this.signal)).permalink ?? null;
      } catch (error) {
        // Only the link is missing: the post is out either way.
        if (this.signal.aborted) throw this.signal.reason ?? error;
      }
    }
    await this.settle(
      "PUBLISHED",
      "published",
      detail,
      { post_id: postId ?? "", permalink: link ?? "", active_run: "" },
      { post_id: postId ?? undefined, permalink: link },
    );
    await recordPublished(this.deps.redis, this.account.accountId, this.id, this.now());
    // Its insights are read on view and swept daily from here on.
    if (postId) await registerPublishedReel(this.deps.redis, this.publishedReel(postId, link), this.now());
    return "published";
  }

  private publishedReel(mediaId: string, permalink: string | null) {
    const { tenant_id: tenantId, caption } = this.record;
    const accountId = this.account.accountId;
    return { mediaId, publicationId: this.id, tenantId, accountId, caption, permalink, publishedAt: this.now() };
  }

  async fail(raw: PublicationError): Promise<PublicationOutcome> {
    const error = this.withoutToken(raw);
    const code = error.code === null ? "" : ` (${error.code}${error.subcode ? `/${error.subcode}` : ""})`;
    await this.settle(
      "FAILED",
      "failed",
      `${error.message}${code} — ${error.advice}`,
      { error: JSON.stringify(error), active_run: "" },
      { error },
    );
    return "failed";
  }

  async timedOut(detail: string, raw: PublicationError | null): Promise<PublicationOutcome> {
    const error = raw && this.withoutToken(raw);
    await this.settle(
      "TIMED_OUT",
      "timed_out",
      detail,
      { error: error ? JSON.stringify(error) : "", active_run: "" },
      { error },
    );
    return "timed-out";
  }

  /** What Graph sent back is shown to clients: a token echoed in it (Graph's paging URLs do that) is cut out. */
  withoutToken(error: PublicationError): PublicationError {
    const token = this.account?.accessToken;
    const text = JSON.stringify(error);
    return token && text.includes(token)
      ? (JSON.parse(text.split(token).join("[redacted]")) as PublicationError)
      : error;
  }
}
