import type { Producer } from "kafkajs";
import type { Log } from "../log";
import type { Redis } from "../redis";
import { revealWork } from "../accept/accept-work";
import { sendBatched } from "../accept/send-batched";
import { TOPICS } from "../topics";
import type { AuditArchive } from "./audit-archive";
import { jobAuditEvent } from "./audit-event";
import type { GenerationCommand } from "./command";
import { jobHashArgs, parseJobRecord, type JobHash, type JobRecord } from "./job-record";
import { FINISHED_JOB_TTL_S, JOB_STATUS_INDEXING, jobKeys } from "./keys";
import { isFinalJob, type FinishReason, type JobStatus } from "./status";
import { startAttempt, type StartedAttempt } from "./start-attempt";
import { costFields } from "./models";
import { PermanentProviderError, type ModelInfo, type Provider } from "./providers/provider";
import { StreamWriter } from "./stream-writer";
import { JOB_WORK } from "./submit-job";
import { countTokens } from "./tokens";
import { HandBack, runUnderLease, type Claim, type HeldLease, type RedisCommand } from "../lease";
import { statusIndexCommands } from "../status-index";
import { abortableSleep } from "../sleep";
import { recordJobFinished } from "../metrics";
import { jobCountSpec, recordJobUsage } from "../usage/record-usage";
import { writeFinal } from "./final-write";

export interface GenerationDeps {
  redis: Redis;
  producer: Producer;
  log: Log;
  workerId: string;
  models: ModelInfo[];
  providerFor(modelName: string): Provider | undefined;
  /** Running jobs by id, so a cancel message can stop the right one. */
  running: Map<string, AbortController>;
  leaseMs?: number;
  providerRetries?: number;
  now?: () => number;
  /** Add each finished job to the usage aggregates (USAGE_AGGREGATES; on unless false). */
  recordUsage?: boolean;
  /** Where each audit event is also written (AUDIT_ARCHIVE_DIR: on with the embedded broker, whose log is bounded). */
  auditArchive?: AuditArchive;
}

export type GenerationOutcome = "finished" | "skipped" | "handed-back";

export interface GenerationControl {
  heartbeat: () => Promise<void>;
  shutdown: AbortSignal;
  /** Names this run: the lease owner, so no two runs of the job write at once (see runUnderLease). */
  runId: string;
  /** Commands that free the run's key slot, written with its last write (ParallelControl.slotRelease). */
  slotRelease?: () => RedisCommand[];
}

/**
 * Runs one command to a final state, at least once and with one outcome: a job already final is
 * not generated again (its audit event is produced if a crash lost it); a job another live run
 * holds is waited for; a new attempt of a job whose earlier worker died starts the stream over
 * with a reset message. `heartbeat` keeps the consumer's group membership during long generations;
 * `shutdown` hands the job back (no final state, offset not committed) for another worker.
 */
export async function runGeneration(
  deps: GenerationDeps,
  command: GenerationCommand,
  control: GenerationControl,
): Promise<GenerationOutcome> {
  const lease = {
    redis: deps.redis,
    key: jobKeys.lease(command.job_id),
    owner: control.runId,
    ms: deps.leaseMs ?? 10_000,
    heartbeat: control.heartbeat,
    shutdown: control.shutdown,
  };
  return runUnderLease<GenerationOutcome>(
    lease,
    generationSteps(deps, command, control.runId, control.slotRelease),
    "handed-back",
  );
}

/**
 * runGeneration's steps (see runUnderLease): `claim` checks the record, takes the lease and marks
 * the job RUNNING for its first attempt, in one script (startAttempt); then `run` generates under
 * the lease. A job final or gone ends at the claim without the lease.
 */
export function generationSteps(
  deps: GenerationDeps,
  command: GenerationCommand,
  runId: string,
  slotRelease: () => RedisCommand[] = () => [],
) {
  const { redis } = deps;
  const now = deps.now ?? Date.now;
  const leaseMs = deps.leaseMs ?? 10_000;
  let first: StartedAttempt | undefined;
  return {
    async claim(): Promise<Claim<GenerationOutcome>> {
      const start = await startAttempt(redis, command.job_id, { workerId: deps.workerId, runId, leaseMs }, now);
      if ("heldBy" in start) return start;
      if ("notStarted" in start) return { done: await skipFinal(deps, command, parseJobRecord(start.notStarted)) };
      first = start.started;
      const { hash } = first;
      // On the log but never revealed: its submitter died (or lost Redis) after the broker's ack.
      if (hash.submitting)
        await revealWork(
          redis,
          JOB_WORK,
          command.tenant_id,
          command.job_id,
          Date.parse(hash.created_at ?? "") || now(),
        );
      return "taken";
    },
    async run(signal: AbortSignal, lease: HeldLease): Promise<GenerationOutcome> {
      if (!first) throw new Error(`job ${command.job_id}: run before its claim`);
      const controller = new AbortController();
      const forward = () => controller.abort(signal.reason);
      signal.addEventListener("abort", forward);
      deps.running.set(command.job_id, controller);
      try {
        return await generate(
          { deps, command, signal: controller.signal, now, runId, lease, leaseMs, slotRelease },
          first,
        );
      } finally {
        signal.removeEventListener("abort", forward);
        deps.running.delete(command.job_id);
      }
    },
  };
}

/** What a run's attempts share: the job, the run, its lease, and when to stop. */
interface RunContext {
  deps: GenerationDeps;
  command: GenerationCommand;
  signal: AbortSignal;
  now: () => number;
  runId: string;
  lease: HeldLease;
  leaseMs: number;
  slotRelease: () => RedisCommand[];
}

async function generate(ctx: RunContext, first: StartedAttempt): Promise<GenerationOutcome> {
  const { deps, command, signal, now, runId, leaseMs } = ctx;
  const { redis } = deps;
  const provider = deps.providerFor(command.model_name);
  const model = deps.models.find((m) => m.id === command.model_name);
  const maxTries = 1 + (deps.providerRetries ?? 2);
  let writer: StreamWriter | undefined;
  let started: StartedAttempt | undefined;
  let lastError = "";

  for (let tryNo = 1; tryNo <= maxTries; tryNo++) {
    if (tryNo === 1) started = first;
    else {
      const start = await startAttempt(redis, command.job_id, { workerId: deps.workerId, runId, leaseMs }, now);
      // Ended since the last attempt (a cancel during the backoff): as if the claim had seen it.
      if ("notStarted" in start) return skipFinal(deps, command, parseJobRecord(start.notStarted));
      if ("heldBy" in start) throw new HandBack("lease lost");
      started = start.started;
    }
    writer ??= StreamWriter.continueAfter(redis, command.job_id, started.eventsWritten);
    if (writer.written > 0) await writer.reset(started.attempt);
    const run: AttemptContext = { ...ctx, writer, model, started };
    if (!provider)
      return finish(run, "FAILED", { error: `unknown model "${command.model_name}"`, startedAt: started.startedAt });
    if (started.hash.cancel_requested === "1")
      return finish(run, "CANCELLED", { output: "", startedAt: started.startedAt });

    const tried = await tryOnce(run, provider);
    if (typeof tried === "string") return tried;
    const { error } = tried;
    lastError = error instanceof Error ? error.message : String(error);
    deps.log("warn", "generation failed", { job_id: command.job_id, attempt: started.attempt, error });
    if (error instanceof PermanentProviderError) break;
    // The sleep is cut short by a cancel or the shutdown, which the next attempt checks.
    if (tryNo < maxTries) await abortableSleep(250 * 2 ** tryNo, signal).catch(() => {});
    if (signal.aborted)
      return signal.reason instanceof HandBack
        ? "handed-back"
        : finish(run, "CANCELLED", { output: "", startedAt: started.startedAt });
  }
  // The loop ran at least once and every way out of it without an attempt started returned.
  const last: AttemptContext = { ...ctx, writer: writer!, model, started: started! };
  return finish(last, "FAILED", { error: `the model failed: ${lastError}`, startedAt: now() });
}

/** A job with no record, or final already: nothing to run; what a final state is owed (DLQ copy, audit event) is made sure of. */
async function skipFinal(
  deps: GenerationDeps,
  command: GenerationCommand,
  record: JobRecord | undefined,
): Promise<GenerationOutcome> {
  if (!record) {
    deps.log("warn", "skipping a command with no job record (not acknowledged to its client, or expired)", {
      job_id: command.job_id,
    });
    return "skipped";
  }
  await emitAfterFinal(deps, command, record);
  return "skipped";
}

/** What an attempt needs besides its provider: the job, where its output goes, and when to stop. */
interface AttemptContext extends RunContext {
  writer: StreamWriter;
  model: ModelInfo | undefined;
  started: StartedAttempt;
}

/**
 * One attempt: streams the model's output to the job and finishes it COMPLETED, or CANCELLED with
 * what was written when it was cut short; a hand-back says so. Any other failure is answered for
 * generate to decide about (a retry, or FAILED).
 */
async function tryOnce(run: AttemptContext, provider: Provider): Promise<GenerationOutcome | { error: unknown }> {
  const { deps, command, writer, signal, now, started } = run;
  const { startedAt } = started;
  let output = "";
  let firstTokenAt: number | undefined;
  let reported: { prompt_tokens: number; completion_tokens: number } | undefined;
  let stoppedBecause: FinishFacts["stoppedBecause"];
  try {
    for await (const chunk of provider.generate({
      model: command.model_name,
      prompt: command.prompt,
      temperature: command.temperature,
      maxTokens: command.max_tokens,
      signal,
    })) {
      if ("usage" in chunk) {
        reported = chunk.usage;
        continue;
      }
      if ("finish_reason" in chunk) {
        stoppedBecause = chunk.finish_reason;
        continue;
      }
      firstTokenAt ??= now();
      output += chunk.delta;
      await writer.delta(chunk.delta);
    }
    // What is still held goes with the final message, in the final write's round trip.
    await writer.end();
    signal.throwIfAborted();
    return finish(run, "COMPLETED", { output, startedAt, firstTokenAt, reported, stoppedBecause });
  } catch (error) {
    const reason = signal.reason ?? error;
    if (reason instanceof HandBack) {
      writer.abandon();
      deps.log("info", "handing a job back", { job_id: command.job_id, reason: reason.message });
      return "handed-back";
    }
    if (signal.aborted) return finish(run, "CANCELLED", { output, startedAt, firstTokenAt });
    return { error };
  }
}

interface FinishFacts {
  output?: string;
  error?: string;
  startedAt: number;
  firstTokenAt?: number;
  reported?: { prompt_tokens: number; completion_tokens: number };
  /** What the provider said about why it stopped, when it said. */
  stoppedBecause?: "stop" | "length";
}

/** Final state, final stream message and expiry of every key in one MULTI; then the audit event. */
async function finish(run: AttemptContext, status: JobStatus, facts: FinishFacts): Promise<GenerationOutcome> {
  const { deps, command, writer, runId, started } = run;
  const { redis } = deps;
  const id = command.job_id;
  // The deltas on their way land first (a failed one is the attempt's failure, answered already);
  // what is still held goes in the final write, before the final message.
  await writer.settle();
  const end = run.now();
  const output = facts.output ?? "";
  const usageCounts = facts.reported ?? {
    prompt_tokens: countTokens(command.prompt),
    completion_tokens: countTokens(output),
  };
  const usage = { ...usageCounts, total_tokens: usageCounts.prompt_tokens + usageCounts.completion_tokens };
  const generationMs = end - facts.startedAt;
  const ttftMs = facts.firstTokenAt === undefined ? null : facts.firstTokenAt - facts.startedAt;
  const tokensPerSecond =
    generationMs > 0 ? Math.round((usage.completion_tokens / generationMs) * 1000 * 10) / 10 : null;
  const createdAt = Date.parse(started.hash.created_at ?? "") || facts.startedAt;
  const finishReason = finishReasonOf(status, facts.stoppedBecause, usage.completion_tokens, command.max_tokens);
  const fields: JobHash = {
    status,
    finish_reason: finishReason,
    output,
    usage: JSON.stringify(usage),
    ...costFields(command.model_name, run.model, usage),
    completed_at: new Date(end).toISOString(),
    generation_ms: String(generationMs),
    queued_ms: String(Math.max(0, facts.startedAt - createdAt)),
    ttft_ms: ttftMs === null ? "" : String(ttftMs),
    tokens_per_second: tokensPerSecond === null ? "" : String(tokensPerSecond),
    model_version: run.model?.version ?? command.model_name,
  };
  if (facts.error) fields.error = facts.error;
  const commands: RedisCommand[] = [
    ["HSET", jobKeys.state(id), ...jobHashArgs(fields)],
    ...writer.final(status, finishReason),
    ...statusIndexCommands(JOB_STATUS_INDEXING, { tenantId: command.tenant_id, id, createdAtMs: createdAt, status }),
  ];
  for (const key of [jobKeys.state(id), jobKeys.events(id)]) commands.push(["EXPIRE", key, FINISHED_JOB_TTL_S]);
  // The record as the final write leaves it, without reading it back: what the start read, and what is written.
  const record = parseJobRecord({ ...started.hash, ...definedFields(fields) });
  if (!record || !isFinalJob(record.status)) throw new Error(`job ${id}: its final record does not parse`);
  const counted = deps.recordUsage !== false && !record.usage_counted;
  const usageSpec = counted ? jobCountSpec({ ...record, status: record.status }, end) : undefined;
  const written = await writeFinal(redis, id, runId, commands, usageSpec);
  if (written !== "written") {
    deps.log("warn", "another run has the job now; this run's result is dropped", { job_id: id, why: written });
    throw new HandBack(written === "lease-lost" ? "lease lost" : "finished by another run");
  }
  recordJobFinished({
    model: command.model_name,
    tenantId: command.tenant_id,
    status,
    durationMs: generationMs,
    ttftMs,
    tokensPerSecond,
  });
  // The run's last write (the audit mark) gives the lease and the key slot up in the same step.
  await emitAfterFinal(deps, command, counted ? { ...record, usage_counted: true } : record, (marks) =>
    run.lease.release([...marks, ...run.slotRelease()]),
  );
  return "finished";
}

const definedFields = (fields: JobHash) =>
  Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined));

/** A provider that did not say why it stopped is taken to have hit max_tokens when it produced that many. */
function finishReasonOf(
  status: JobStatus,
  stoppedBecause: FinishFacts["stoppedBecause"],
  completionTokens: number,
  maxTokens: number,
): FinishReason {
  if (status === "CANCELLED") return "cancelled";
  if (status !== "COMPLETED") return "error";
  return stoppedBecause ?? (completionTokens >= maxTokens ? "length" : "stop");
}

/**
 * What follows a final state, each marked once done so a redelivery after a crash (or a refused
 * write, tried again) does only what is missing: the tenant's usage aggregates, a FAILED job's copy
 * to the DLQ, then the audit event (last: once `audited` is set the job may be deleted). `write`
 * writes the audit mark (a run under the lease releases it in the same step).
 */
async function emitAfterFinal(
  deps: GenerationDeps,
  command: GenerationCommand,
  record: JobRecord,
  write: (commands: RedisCommand[]) => Promise<unknown> = (commands) => writeCommands(deps.redis, commands),
): Promise<void> {
  if (deps.recordUsage !== false && !record.usage_counted && isFinalJob(record.status))
    await recordJobUsage(deps.redis, { ...record, status: record.status }, deps.now?.());
  if (record.status === "FAILED" && !record.dead_lettered) {
    await deps.producer.send({
      topic: TOPICS.dlq.name,
      acks: -1,
      messages: [
        {
          key: command.tenant_id,
          value: JSON.stringify(command),
          headers: { reason: record.error || "failed", worker_id: deps.workerId },
        },
      ],
    });
    await deps.redis.hset(jobKeys.state(command.job_id), { dead_lettered: "1" } satisfies JobHash);
  }
  if (!record.audited) await emitAudit(deps, command.job_id, record, write);
}

/** One event per finished job on ai.generation.completed, the audit log, and in the audit archive when there is one. */
async function emitAudit(
  deps: GenerationDeps,
  jobId: string,
  record: JobRecord,
  write: (commands: RedisCommand[]) => Promise<unknown>,
): Promise<void> {
  const { status } = record;
  if (!isFinalJob(status)) throw new Error(`job ${jobId}: an audit event before its final state (${status})`);
  // The worker that ran the job, not the one emitting: an event sent again after a lost answer or
  // a crash, by whichever worker the command reaches, is the same event, byte for byte.
  const value = JSON.stringify(jobAuditEvent({ ...record, status }, record.worker_id ?? deps.workerId));
  // With the events of other jobs that end in the same turn: one produce request and one record
  // batch for all of them, which the webhook consumer then fetches together; one archive write too.
  // `audited` only once both hold it: either failing, the emit is tried again on redelivery.
  await Promise.all([
    sendBatched(deps.producer, TOPICS.completed.name, { key: record.tenant_id, value }),
    deps.auditArchive?.append(value),
  ]);
  await write([["HSET", jobKeys.state(jobId), ...jobHashArgs({ audited: "1" })]]);
}

const writeCommands = (redis: Redis, commands: RedisCommand[]) =>
  Promise.all(commands.map(([name, ...args]) => redis.call(name, ...args)));
