import { stat } from "node:fs/promises";
import type { Log } from "../log";
import { runUnderLease } from "../lease";
import type { Redis } from "../redis";
import { abortableSleep } from "../sleep";
import { addToTenantIndex } from "../tenant-index";
import { readUpload, uploadPath } from "../uploads/upload-store";
import { notifyPublicationNeedsReconnect, notifyPublicationWebhooks } from "../webhooks/publication-events";
import { GraphTransportError, isTransientGraphFailure, type ContainerStatus, type GraphAccount, type GraphClient, type PublishingLimit } from "./graph-client";
import { cacheQuota, nextQuotaSlotAt, recordPublished } from "./account-quota";
import { connectedAccountKeys, type ConnectedAccounts } from "./connected-accounts";
import { GraphError } from "./graph-error";
import type { PublicationChanges, PublicationError, ScheduledReason } from "./publication";
import { releaseWaitingPublications } from "./release-waiting-publications";
import { appendEvent, PUBLICATION_INDEX_BOUND, publicationKeys, type EventBody } from "./publication-record";
import { accountMissingError, containerError, describeFailure, errorOf, expiredError, noContainerIdError, preflightError, uploadMissingError } from "./publication-error";
import type { PreflightResult, PreflightSource } from "./preflight-video";
import { isSettledPublication, type PublicationStatus } from "./status";

export interface RetryPolicy {
  /** Tries after the first one. */
  retries: number;
  baseMs: number;
  maxMs: number;
}

export interface PublicationDeps {
  redis: Redis;
  graph: GraphClient;
  log: Log;
  workerId: string;
  pollIntervalMs: number;
  pollAttempts: number;
  retry?: Partial<RetryPolicy>;
  /** Backoff after Graph's rate-limit signals: jittered, doubling from baseMs up to maxMs, or longer if Graph says so. */
  rateLimit?: Partial<Omit<RetryPolicy, "retries">>;
  /** Connected accounts: the token to publish with, and where a refused one is marked needs_reconnect. */
  connected: ConnectedAccounts;
  leaseMs?: number;
  /** How long a message may wait for its submitter to finish recording it. */
  submitSettleMs?: number;
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where uploaded videos live (DATA_DIR): a publication with an upload_id goes through Graph's resumable upload. */
  dataDir?: string;
  /** Checks the video before a container is created (against the real Graph API; see preflight-video.ts). */
  preflight?: (source: PreflightSource, signal: AbortSignal) => Promise<PreflightResult>;
}

export interface RunControl {
  /** Keeps the consumer's group membership while the flow runs. */
  heartbeat: () => Promise<void>;
  /** Aborts when the worker stops: the publication is handed back, not settled. */
  shutdown: AbortSignal;
  /** Names this run: the owner of the publication's lease (see runUnderLease). */
  runId: string;
}

/**
 * `deferred`, `timed-out`: waiting for a time or a client; `skipped`: nothing to do (already settled
 * or unknown); `handed-back`: stopped half-way, for another worker to resume. Every outcome but the
 * last lets the consumer commit the message's offset.
 */
export type PublicationOutcome = "published" | "failed" | "timed-out" | "deferred" | "skipped" | "handed-back";

export const DEFAULT_RETRY: RetryPolicy = { retries: 5, baseMs: 1000, maxMs: 30_000 };
export const DEFAULT_RATE_LIMIT_BACKOFF = { baseMs: 60_000, maxMs: 15 * 60_000 };

/** The record is gone, or a client moved it on (cancelled it) under the run: nothing more to write. */
class RecordClosed extends Error {}

/** A scheduled publication whose time has not come: the scheduler enqueues it again at publish_at; no slot is held meanwhile. */
async function deferIfNotDue(redis: Redis, id: string, state: Record<string, string>, now: number): Promise<"deferred" | undefined> {
  if (state.status !== "SCHEDULED" || !(Date.parse(state.publish_at) > now)) return undefined;
  // LT: a read older than a reschedule may only make the wake-up earlier (the run defers again then), never later.
  await redis.zadd(publicationKeys.scheduled, "LT", Date.parse(state.publish_at), id);
  return "deferred";
}

/**
 * Runs one publication as far as it can go: create the container (once), poll it every
 * `pollIntervalMs` up to `pollAttempts` times, publish it when FINISHED (once). Progress lives in
 * Redis, so a redelivery after a crash resumes where the last worker stopped: it never creates a
 * second container while one exists, and it reads the container before any publish it cannot be
 * sure of. A lease keeps two workers off the same publication.
 */
export async function runPublication(deps: PublicationDeps, publicationId: string, control: RunControl): Promise<PublicationOutcome> {
  const { redis } = deps;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? abortableSleep;
  const stateKey = publicationKeys.state(publicationId);
  const settleDeadline = now() + (deps.submitSettleMs ?? 30_000);

  const outcome = await runUnderLease<PublicationOutcome>(
    { redis, key: publicationKeys.lease(publicationId), owner: control.runId, ms: deps.leaseMs ?? 15_000, heartbeat: control.heartbeat, shutdown: control.shutdown },
    {
      async check() {
        for (;;) {
          const state = await redis.hgetall(stateKey);
          if (!state.publication_id) {
            deps.log("warn", "skipping a publication with no record (not accepted, or expired)", { publication_id: publicationId });
            return "skipped";
          }
          // The message can overtake the submitter's last write; give it a moment to settle either way.
          if (state.submitting === "1" && now() < settleDeadline) {
            await control.heartbeat().catch(() => {});
            await sleep(200, control.shutdown).catch(() => {});
            if (control.shutdown.aborted) return "handed-back";
            continue;
          }
          if (isSettledPublication(state.status)) {
            // Webhooks: a run that died between its final write and queuing the event left the message uncommitted; queue it now (once).
            await notifyPublicationWebhooks(redis, state.tenant_id, publicationId, state.status, deps.log);
            return "skipped";
          }
          return deferIfNotDue(redis, publicationId, state, now());
        }
      },
      run: (signal) =>
        new PublicationRun(deps, publicationId, signal, now, sleep).run().catch((error) => {
          if (error instanceof RecordClosed) return "skipped";
          throw error;
        }),
    },
    "handed-back",
  );
  if (outcome === "handed-back") deps.log("info", "handing a publication back", { publication_id: publicationId });
  return outcome;
}

type Failure = { ok: false; error: GraphError | GraphTransportError };
type Attempt<T> = { ok: true; value: T } | Failure;

/** One run of the flow under the lease; every state change goes through `record`. */
class PublicationRun {
  private readonly retry: RetryPolicy;
  private status: PublicationStatus = "QUEUED";
  private state: Record<string, string> = {};
  private account!: GraphAccount;
  /** The connection whose token this run uses: a refusal marks the account only if it is still this one. */
  private tokenVersion = 0;
  private containerId = "";
  private pollCount = 0;

  constructor(
    private readonly deps: PublicationDeps,
    private readonly id: string,
    private readonly signal: AbortSignal,
    private readonly now: () => number,
    private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ) {
    this.retry = { ...DEFAULT_RETRY, ...deps.retry };
  }

  async run(): Promise<PublicationOutcome> {
    const { redis } = this.deps;
    this.state = await redis.hgetall(publicationKeys.state(this.id));
    const state = this.state;
    if (!state.publication_id) return "skipped";
    if (isSettledPublication(state.status)) return "skipped";
    if (await deferIfNotDue(redis, this.id, state, this.now())) return "deferred";
    this.status = state.status as PublicationStatus;
    this.containerId = state.container_id ?? "";
    this.pollCount = Number(state.poll_count ?? 0);
    if (state.submitting === "1") await this.makeVisible();
    const interrupted = state.active_run;
    await redis.hset(publicationKeys.state(this.id), "active_run", this.deps.workerId);

    const account = await this.resolveAccount();
    if (typeof account === "string") return account;
    this.account = account;

    if (this.status === "SCHEDULED") {
      // Due only as read: a client that rescheduled, edited or cancelled it meanwhile wins, and the run reads it again.
      const due = await appendEvent(redis, this.id, {
        status: "QUEUED",
        body: { kind: "step", step: { at: this.iso(), step: "due", detail: `publish_at ${state.publish_at} reached.` } },
        expect: { status: "SCHEDULED", publish_at: state.publish_at ?? "", caption: state.caption ?? "" },
        fields: { scheduled_reason: "" },
        changes: { scheduled_reason: null },
      });
      if (due <= 0) return this.run();
      this.status = "QUEUED";
      await redis.zrem(publicationKeys.scheduled, this.id);
    } else if (interrupted) {
      await this.step(this.status, "picked_up", `Picked up again after the worker running it stopped (${this.status.toLowerCase()}${this.containerId ? `, container ${this.containerId}` : ""}).`);
    }

    if (!this.containerId && state.retry_of_container) {
      const earlier = await this.checkEarlierContainer(state.retry_of_container);
      if (earlier !== undefined) return earlier;
    }
    if (!this.containerId) {
      const created = await this.createContainer();
      if (created !== undefined) return created;
    } else if (state.upload_id && state.upload_done !== "1") {
      // Stopped between creating the container and sending all its bytes: send them again from offset 0.
      const upload = await this.uploadedVideo();
      if (typeof upload === "string") return upload;
      const sent = await this.sendUpload(upload, state.upload_uri ?? "");
      if (sent !== undefined) return sent;
    }
    return this.pollAndPublish();
  }

  /** The account's token, or the outcome when there is none to use: gone (FAILED) or needing a reconnect (waiting). */
  private async resolveAccount(): Promise<GraphAccount | PublicationOutcome> {
    const { state } = this;
    const account = await this.deps.connected.find(state.tenant_id, state.account_id);
    if (!account) return this.fail(accountMissingError(state.account_id));
    this.tokenVersion = account.tokenVersion;
    if (account.status === "needs_reconnect" || !account.accessToken) return this.waitForReconnect(account.error?.headline ?? "Graph refused its token");
    return { accountId: account.accountId, accessToken: account.accessToken };
  }

  /**
   * A retry after a failure that may have come after a publish: the earlier container is read
   * first, and PUBLISHED means the reel is out (never a second post); otherwise a new container.
   */
  private async checkEarlierContainer(containerId: string): Promise<PublicationOutcome | undefined> {
    const attempt = await this.withRetries("Reading the earlier container", () => this.deps.graph.readContainer(containerId, this.account.accessToken, this.signal));
    if (!attempt.ok) {
      if (this.waitsInstead(attempt.error)) return this.failOrWait(attempt.error);
      if (isTransientGraphFailure(attempt.error)) return this.timedOut(`The earlier container ${containerId} could not be read (${describeFailure(attempt.error)}); not creating another before it is known whether it was published.`, errorOf(attempt.error));
      return undefined;
    }
    if (attempt.value.statusCode !== "PUBLISHED") return undefined;
    this.containerId = containerId;
    return this.alreadyPublished();
  }

  /** Reads content_publishing_limit before a container is made: with the window's posts used up, the publication waits for a slot. */
  private async waitIfQuotaUsed(): Promise<PublicationOutcome | undefined> {
    let limit: PublishingLimit;
    try {
      limit = await this.deps.graph.readPublishingLimit(this.account, this.signal);
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason ?? error;
      if ((error instanceof GraphError || error instanceof GraphTransportError) && this.waitsInstead(error)) return this.failOrWait(error);
      // Advisory: Graph enforces the limit at publish anyway (9 / 2207042), and that waits too.
      return undefined;
    }
    await cacheQuota(this.deps.redis, this.account.accountId, limit);
    if (limit.quota_total === null || limit.quota_usage < limit.quota_total) return undefined;
    return this.waitForQuota(`The account published ${limit.quota_usage} of its ${limit.quota_total} posts in the moving ${Math.round((limit.quota_duration ?? 86400) / 3600)} h`, limit.quota_duration);
  }

  /** Errors that make the publication wait rather than fail: a refused token, a used-up quota, a rate limit. */
  private waitsInstead(error: GraphError | GraphTransportError): boolean {
    if (!(error instanceof GraphError)) return false;
    // Usage headers that name a wait make any error a rate limit.
    if ((error.usage?.regainAccessMs ?? 0) > 0) return true;
    return error.action === "wait-quota" || error.action === "wait-rate-limit" || error.action === "reconnect-account";
  }

  private async failOrWait(error: GraphError | GraphTransportError): Promise<PublicationOutcome> {
    if (!(error instanceof GraphError) || !this.waitsInstead(error)) return this.fail(errorOf(error));
    if (error.action === "wait-quota") return this.waitForQuota(`Graph refused: ${error.message} (${error.code}/${error.subcode ?? "-"})`, null);
    if (error.action === "reconnect-account") {
      await this.deps.connected.markNeedsReconnect(this.account.accountId, this.tokenVersion, this.withoutToken(errorOf(error)));
      return this.waitForReconnect(`${describeFailure(error)}`);
    }
    return this.waitForRateLimit(error);
  }

  /** Waits, SCHEDULED with its reason, until `until` (the scheduler brings it back) or, with null, until someone acts. */
  private async wait(reason: ScheduledReason, until: number | null, detail: string): Promise<PublicationOutcome> {
    const publishAt = until === null ? "" : new Date(until).toISOString();
    await this.step("SCHEDULED", "waiting", detail, { publish_at: publishAt, scheduled_reason: reason, poll_round_start: String(this.pollCount), active_run: "" }, { publish_at: publishAt || null, scheduled_reason: reason });
    if (until !== null) await this.deps.redis.zadd(publicationKeys.scheduled, until, this.id);
    return "deferred";
  }

  private async waitForReconnect(why: string): Promise<PublicationOutcome> {
    const { redis, connected } = this.deps;
    const accountId = this.state.account_id;
    const outcome = await this.wait("needs_reconnect", null, `The account needs reconnecting (${why}); the publication waits and goes on once it is connected again.`);
    await redis.sadd(connectedAccountKeys.waiting(accountId), this.id);
    // Reconnected between the refusal and the line above: its release may have missed this one.
    const now = await connected.find(this.state.tenant_id, accountId);
    if (now?.status === "connected" && now.tokenVersion !== this.tokenVersion) await releaseWaitingPublications(redis, accountId, this.now());
    await notifyPublicationNeedsReconnect(redis, this.state.tenant_id, this.id, this.deps.log);
    return outcome;
  }

  private async waitForQuota(why: string, quotaDurationS: number | null): Promise<PublicationOutcome> {
    const until = await nextQuotaSlotAt(this.deps.redis, this.state.account_id, (quotaDurationS ?? 86400) * 1000, this.now());
    return this.wait("quota", until, `${why}; waiting until the window frees a slot at ${new Date(until).toISOString()}.`);
  }

  private async waitForRateLimit(error: GraphError): Promise<PublicationOutcome> {
    const waits = Number(this.state.rate_limited_waits ?? 0) + 1;
    await this.deps.redis.hset(publicationKeys.state(this.id), "rate_limited_waits", String(waits));
    this.state.rate_limited_waits = String(waits);
    const policy = { ...DEFAULT_RATE_LIMIT_BACKOFF, ...this.deps.rateLimit };
    const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (waits - 1));
    // Equal jitter: accounts refused together do not all come back in the same second.
    const delay = Math.max(error.usage?.regainAccessMs ?? 0, Math.round(ceiling / 2 + Math.random() * (ceiling / 2)));
    return this.wait("rate_limited", this.now() + delay, `Graph asked to slow down (${describeFailure(error)}); trying again in ${Math.round(delay / 1000)} s.`);
  }

  private async createContainer(): Promise<PublicationOutcome | undefined> {
    const { state } = this;
    const upload = state.upload_id ? await this.uploadedVideo() : undefined;
    if (typeof upload === "string") return upload;
    const refused = await this.preflight(upload);
    if (refused !== undefined) return refused;
    const full = await this.waitIfQuotaUsed();
    if (full !== undefined) return full;
    await this.step("CREATING", "creating", upload ? `Creating a resumable REELS container for the uploaded video (${upload.size} bytes).` : `Creating a REELS container from ${state.video_url}.`);
    const input = upload ? { resumable: true } : { videoUrl: state.video_url };
    const attempt = await this.withRetries("Creating the container", () =>
      this.deps.graph.createContainer(this.account, { ...input, caption: state.caption || undefined, shareToFeed: state.share_to_feed !== "false" }, this.signal),
    );
    if (!attempt.ok) return this.failOrWait(attempt.error);
    const answer = attempt.value;
    if (!answer.id) {
      return this.fail(noContainerIdError(answer));
    }
    if (upload && !answer.uri) return this.fail(noContainerIdError(answer, "uri"));
    this.containerId = answer.id;
    const createdAt = new Date(this.now()).toISOString();
    const detail = upload ? `Container ${answer.id} created for a resumable upload.` : `Container ${answer.id} created; Graph is processing the video.`;
    await this.step("PROCESSING", "created", detail, { container_id: answer.id, container_created_at: createdAt, ...(upload ? { upload_uri: answer.uri ?? "" } : {}) }, { container_id: answer.id });
    return upload ? this.sendUpload(upload, answer.uri ?? "") : undefined;
  }

  /** The uploaded file of an upload_id publication; it fails the publication when the upload is gone. */
  private async uploadedVideo(): Promise<{ path: string; size: number } | PublicationOutcome> {
    const record = this.deps.dataDir ? await readUpload(this.deps.redis, this.state.upload_id) : undefined;
    const path = record && this.deps.dataDir ? uploadPath(this.deps.dataDir, record.file) : undefined;
    const size = path ? (await stat(path).catch(() => undefined))?.size : undefined;
    if (!path || size === undefined) return this.fail(uploadMissingError(this.state.upload_id));
    return { path, size };
  }

  /** Graph's resumable upload: the bytes to the container's uri; then Graph processes them as a fetched video. */
  private async sendUpload(upload: { path: string; size: number }, uri: string): Promise<PublicationOutcome | undefined> {
    await this.step("PROCESSING", "uploading", `Uploading ${upload.size} bytes to the container's upload address.`);
    const attempt = await this.withRetries("Uploading the video", () => this.deps.graph.uploadVideo(this.account, uri, upload, this.signal));
    if (!attempt.ok) return this.fail(errorOf(attempt.error));
    await this.step("PROCESSING", "uploaded", "Upload complete; Graph is processing the video.", { upload_done: "1" });
    return undefined;
  }

  /** Probes the video before any container exists: a spec violation fails at once with Graph's code; warnings are kept on the publication. */
  private async preflight(upload: { path: string } | undefined): Promise<PublicationOutcome | undefined> {
    if (!this.deps.preflight) return undefined;
    const result = await this.deps.preflight(upload ? { file: upload.path } : { url: this.state.video_url }, this.signal);
    if (result.problems.length > 0) return this.fail(preflightError(result.problems));
    const { warnings } = result;
    const detail = `Checked the video before creating a container: ${result.summary}.${warnings.length ? ` Warnings: ${warnings.join("; ")}.` : ""}`;
    await this.step(this.status, "preflight", detail, warnings.length ? { warnings: JSON.stringify(warnings) } : {}, warnings.length ? { warnings } : undefined);
    return undefined;
  }

  /**
   * Poll until FINISHED, then publish. After a crash in PUBLISHING (or a failed publish) the
   * container is read before anything else: PUBLISHED means the earlier publish went through.
   */
  private async pollAndPublish(): Promise<PublicationOutcome> {
    let next = (this.status === "PUBLISHING" ? "check" : "wait-and-poll") as "wait-and-poll" | "check" | "publish";
    let publishFailures = 0;
    const roundStart = Number(this.state.poll_round_start ?? 0);
    for (;;) {
      if (next === "wait-and-poll") {
        if (this.pollCount - roundStart >= this.deps.pollAttempts) {
          return this.timedOut(`The container was not FINISHED after ${this.deps.pollAttempts} polls, ${this.deps.pollIntervalMs} ms apart; it was not published.`, null);
        }
        await this.sleep(this.deps.pollIntervalMs, this.signal);
      }
      if (next !== "publish") {
        const read = await this.pollContainer();
        if (typeof read === "string") return read;
        switch (read.statusCode) {
          case "FINISHED":
            next = "publish";
            break;
          case "PUBLISHED":
            return this.alreadyPublished();
          case "ERROR":
            return this.fail(containerError(read));
          case "EXPIRED":
            return this.fail(expiredError(read.fbtraceId));
          default:
            this.status = "PROCESSING";
            next = "wait-and-poll";
            continue;
        }
      }

      const outcome = await this.publishContainer();
      if (outcome === "not-ready") {
        next = "wait-and-poll";
        continue;
      }
      if (outcome instanceof GraphError || outcome instanceof GraphTransportError) {
        if (this.waitsInstead(outcome)) return this.failOrWait(outcome);
        if (!isTransientGraphFailure(outcome) || publishFailures >= this.retry.retries) return this.fail(errorOf(outcome));
        publishFailures++;
        const delay = this.backoff(publishFailures);
        await this.step("PUBLISHING", "retrying", `Publishing failed (${describeFailure(outcome)}); reading the container again in ${delay} ms before another try.`);
        await this.sleep(delay, this.signal);
        next = "check";
        continue;
      }
      return outcome;
    }
  }

  /** One status read, recorded as a poll attempt with its time and status_code. */
  private async pollContainer(): Promise<ContainerStatus | PublicationOutcome> {
    const attempt = await this.withRetries("Reading the container's status", () => this.deps.graph.readContainer(this.containerId, this.account.accessToken, this.signal));
    if (!attempt.ok) {
      if (isTransientGraphFailure(attempt.error) && !this.waitsInstead(attempt.error)) {
        return this.timedOut(`Graph kept failing while the container was read (${describeFailure(attempt.error)}); resume to poll again.`, errorOf(attempt.error));
      }
      return this.failOrWait(attempt.error);
    }
    const read = attempt.value;
    this.pollCount++;
    const statusCode = read.statusCode ?? "";
    await this.record(
      { kind: "poll", poll: { attempt: this.pollCount, at: this.iso(), status_code: read.statusCode, status: read.status } },
      this.status,
      { poll_count: String(this.pollCount), last_status_code: statusCode },
      { last_status_code: statusCode },
    );
    return read;
  }

  /** Records the `publishing` step first, so a worker that takes over knows a publish may have happened. */
  private async publishContainer(): Promise<PublicationOutcome | "not-ready" | GraphError | GraphTransportError> {
    await this.step("PUBLISHING", "publishing", `Publishing container ${this.containerId}.`);
    let postId: string;
    try {
      ({ id: postId } = await this.deps.graph.publishContainer(this.account, this.containerId, this.signal));
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason ?? error;
      if (!(error instanceof GraphError || error instanceof GraphTransportError)) throw error;
      if (error instanceof GraphError && error.action === "not-ready") {
        // Not FINISHED after all (or already published): the next poll says which.
        await this.step("PROCESSING", "not_ready", `Graph refused to publish: ${error.message} (${error.code}/${error.subcode ?? "-"}); polling again.`);
        return "not-ready";
      }
      return error;
    }
    // Kept at once: a worker taking over after this point finds the post id without asking Graph.
    await this.deps.redis.hset(publicationKeys.state(this.id), "post_id", postId);
    return this.published(postId, undefined, `Published as post ${postId}.`);
  }

  /** The container says PUBLISHED but this worker has no answer for it: an earlier publish went through. */
  private async alreadyPublished(): Promise<PublicationOutcome> {
    const known = await this.deps.redis.hget(publicationKeys.state(this.id), "post_id");
    if (known) return this.published(known, undefined, `The container was already published as post ${known}; not publishing again.`);
    const post = await this.findPost();
    const detail = post
      ? `The container was already published (an earlier answer was lost); found post ${post.id}. Not publishing again.`
      : "The container was already published (an earlier answer was lost), but the post could not be identified among the account's media. Not publishing again.";
    return this.published(post?.id ?? null, post?.permalink ?? null, detail);
  }

  /** Graph does not link a container to its post: look for a post with this caption made after the container. */
  private async findPost(): Promise<{ id: string; permalink: string | null } | undefined> {
    try {
      const media = await this.deps.graph.listMedia(this.account, "id,caption,timestamp,permalink", 50, this.signal);
      const since = Date.parse(this.state.container_created_at ?? "") - 60_000;
      const caption = (this.state.caption ?? "").trim();
      const matches = media
        .filter((m) => (m.caption ?? "").trim() === caption && (Number.isNaN(since) || parseGraphTime(m.timestamp) >= since))
        .sort((a, b) => parseGraphTime(a.timestamp) - parseGraphTime(b.timestamp));
      const first = matches[0];
      return first ? { id: first.id, permalink: first.permalink ?? null } : undefined;
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason ?? error;
      return undefined;
    }
  }

  private async published(postId: string | null, permalink: string | null | undefined, detail: string): Promise<PublicationOutcome> {
    let link = permalink ?? null;
    if (postId && permalink === undefined) {
      try {
        link = (await this.deps.graph.readMedia(postId, this.account.accessToken, "id,permalink", this.signal)).permalink ?? null;
      } catch (error) {
        if (this.signal.aborted) throw this.signal.reason ?? error;
      }
    }
    await this.step("PUBLISHED", "published", detail, { post_id: postId ?? "", permalink: link ?? "", active_run: "" }, { post_id: postId ?? undefined, permalink: link });
    await recordPublished(this.deps.redis, this.account.accountId, this.id, this.now());
    return "published";
  }

  private async fail(raw: PublicationError): Promise<PublicationOutcome> {
    const error = this.withoutToken(raw);
    const code = error.code === null ? "" : ` (${error.code}${error.subcode ? `/${error.subcode}` : ""})`;
    await this.step("FAILED", "failed", `${error.message}${code} — ${error.advice}`, { error: JSON.stringify(error), active_run: "" }, { error });
    return "failed";
  }

  private async timedOut(detail: string, raw: PublicationError | null): Promise<PublicationOutcome> {
    const error = raw && this.withoutToken(raw);
    await this.step("TIMED_OUT", "timed_out", detail, { error: error ? JSON.stringify(error) : "", active_run: "" }, { error });
    return "timed-out";
  }

  /** What Graph sent back is shown to clients: a token echoed in it (Graph's paging URLs do that) is cut out. */
  private withoutToken(error: PublicationError): PublicationError {
    const token = this.account?.accessToken;
    const text = JSON.stringify(error);
    return token && text.includes(token) ? (JSON.parse(text.split(token).join("[redacted]")) as PublicationError) : error;
  }

  /** Transient failures are tried again with exponential backoff, each retry on the timeline; others come back at once. */
  private async withRetries<T>(what: string, call: () => Promise<T>): Promise<Attempt<T>> {
    for (let failures = 0; ; ) {
      try {
        return { ok: true, value: await call() };
      } catch (error) {
        if (this.signal.aborted) throw this.signal.reason ?? error;
        if (!(error instanceof GraphError || error instanceof GraphTransportError)) throw error;
        if (this.waitsInstead(error) || !isTransientGraphFailure(error) || failures >= this.retry.retries) return { ok: false, error };
        failures++;
        const delay = this.backoff(failures);
        await this.step(this.status, "retrying", `${what} failed (${describeFailure(error)}); try ${failures + 1} of ${this.retry.retries + 1} in ${delay} ms.`);
        await this.sleep(delay, this.signal);
      }
    }
  }

  private backoff(failures: number): number {
    return Math.min(this.retry.maxMs, this.retry.baseMs * 2 ** (failures - 1));
  }

  private step(status: PublicationStatus, step: string, detail: string, fields: Record<string, string> = {}, changes?: PublicationChanges): Promise<void> {
    return this.record({ kind: "step", step: { at: this.iso(), step, detail } }, status, fields, changes);
  }

  private async record(body: EventBody, status: PublicationStatus, fields: Record<string, string>, changes?: PublicationChanges): Promise<void> {
    // A worker that lost its lease must not write: the one that holds it now owns the timeline.
    if (this.signal.aborted) throw this.signal.reason;
    const seq = await appendEvent(this.deps.redis, this.id, { status, body, fields, changes });
    if (seq <= 0) throw new RecordClosed();
    this.status = status;
    // Webhooks (lib/webhooks): a final write queues reel.published / reel.failed / reel.needs_attention.
    await notifyPublicationWebhooks(this.deps.redis, this.state.tenant_id, this.id, status, this.deps.log);
  }

  /** The broker had the message but the submitter never finished (it died, or is slow): show the publication. */
  private async makeVisible(): Promise<void> {
    const { redis } = this.deps;
    const createdAt = Date.parse(this.state.created_at) || this.now();
    await addToTenantIndex(redis.multi().hdel(publicationKeys.state(this.id), "submitting"), publicationKeys.tenantIndex(this.state.tenant_id), this.id, createdAt, PUBLICATION_INDEX_BOUND, this.now()).exec();
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}

/** Graph writes 2024-05-01T12:00:00+0000, which Date.parse does not read everywhere. */
function parseGraphTime(value: string | undefined): number {
  if (!value) return Number.NaN;
  return Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"));
}
