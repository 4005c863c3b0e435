import type { Producer } from "kafkajs";
import type { Log } from "../log";
import { execPipeline, type Redis } from "../redis";
import { revealWork } from "../accept/accept-work";
import { TOPICS } from "../topics";
import { jobAuditEvent } from "./audit-event";
import type { GenerationCommand } from "./command";
import { jobHashArgs, readJobRecord, type JobField, type JobHash, type JobRecord } from "./job-record";
import { FINISHED_JOB_TTL_S, JOB_STATUS_INDEXING, jobKeys } from "./keys";
import { isFinalJob, type FinishReason, type JobStatus } from "./status";
import { costFields } from "./models";
import { PermanentProviderError, type ModelInfo, type Provider } from "./providers/provider";
import { StreamWriter } from "./stream-writer";
import { JOB_WORK } from "./submit-job";
import { countTokens } from "./tokens";
import { HandBack, runUnderLease, writeIfLeaseHeld, type RedisCommand } from "../lease";
import { statusIndexCommands, syncStatusIndex } from "../status-index";
import { abortableSleep } from "../sleep";
import { recordJobFinished } from "../metrics";
import { recordJobUsage } from "../usage/record-usage";

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
}

export type GenerationOutcome = "finished" | "skipped" | "handed-back";

export interface GenerationControl {
  heartbeat: () => Promise<void>;
  shutdown: AbortSignal;
  /** Names this run: the lease owner, so no two runs of the job write at once (see runUnderLease). */
  runId: string;
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
  const { redis } = deps;
  const now = deps.now ?? Date.now;
  const leaseKey = jobKeys.lease(command.job_id);
  return runUnderLease<GenerationOutcome>(
    {
      redis,
      key: leaseKey,
      owner: control.runId,
      ms: deps.leaseMs ?? 10_000,
      heartbeat: control.heartbeat,
      shutdown: control.shutdown,
    },
    {
      async check() {
        const record = await readJobRecord(redis, command.job_id);
        if (!record) {
          deps.log("warn", "skipping a command with no job record (not acknowledged to its client, or expired)", {
            job_id: command.job_id,
          });
          return "skipped";
        }
        if (isFinalJob(record.status)) {
          await emitAfterFinal(deps, command, record);
          return "skipped";
        }
        // On the log but never revealed: its submitter died (or lost Redis) after the broker's ack.
        if (record.submitting)
          await revealWork(
            redis.multi(),
            JOB_WORK,
            record.tenant_id,
            command.job_id,
            Date.parse(record.created_at) || now(),
          ).exec();
        return undefined;
      },
      async run(signal) {
        const controller = new AbortController();
        const forward = () => controller.abort(signal.reason);
        signal.addEventListener("abort", forward);
        deps.running.set(command.job_id, controller);
        try {
          return await generate(deps, command, controller.signal, now, control.runId);
        } finally {
          signal.removeEventListener("abort", forward);
          deps.running.delete(command.job_id);
        }
      },
    },
    "handed-back",
  );
}

async function generate(
  deps: GenerationDeps,
  command: GenerationCommand,
  signal: AbortSignal,
  now: () => number,
  runId: string,
): Promise<GenerationOutcome> {
  const { redis } = deps;
  const stateKey = jobKeys.state(command.job_id);
  const writer = await StreamWriter.open(redis, command.job_id);
  const provider = deps.providerFor(command.model_name);
  const model = deps.models.find((m) => m.id === command.model_name);
  const maxTries = 1 + (deps.providerRetries ?? 2);
  let lastError = "";

  for (let tryNo = 1; tryNo <= maxTries; tryNo++) {
    const { attempt, startedAt } = await startAttempt(deps, command.job_id, runId, now);
    if (writer.written > 0) await writer.reset(attempt);
    if (!provider) {
      return finish(deps, command, writer, runId, "FAILED", {
        error: `unknown model "${command.model_name}"`,
        startedAt,
        now,
        model,
        attempt,
      });
    }
    if ((await redis.hget(stateKey, "cancel_requested" satisfies JobField)) === "1") {
      return finish(deps, command, writer, runId, "CANCELLED", { output: "", startedAt, now, model, attempt });
    }

    const tried = await tryOnce({ deps, command, writer, runId, signal, now, model }, provider, attempt, startedAt);
    if (typeof tried === "string") return tried;
    const { error } = tried;
    lastError = error instanceof Error ? error.message : String(error);
    deps.log("warn", "generation failed", { job_id: command.job_id, attempt, error });
    if (error instanceof PermanentProviderError) break;
    // The sleep is cut short by a cancel or the shutdown, which the next attempt checks.
    if (tryNo < maxTries) await abortableSleep(250 * 2 ** tryNo, signal).catch(() => {});
    if (signal.aborted)
      return signal.reason instanceof HandBack
        ? "handed-back"
        : finish(deps, command, writer, runId, "CANCELLED", { output: "", startedAt, now, model, attempt });
  }
  const attempt = Number(await redis.hget(stateKey, "attempts" satisfies JobField));
  return finish(deps, command, writer, runId, "FAILED", {
    error: `the model failed: ${lastError}`,
    startedAt: now(),
    now,
    model,
    attempt,
  });
}

/** What an attempt needs besides its provider: the job, where its output goes, and when to stop. */
interface AttemptContext {
  deps: GenerationDeps;
  command: GenerationCommand;
  writer: StreamWriter;
  runId: string;
  signal: AbortSignal;
  now: () => number;
  model: ModelInfo | undefined;
}

/** Marks the job RUNNING for a new attempt (counted in `attempts`); its number and when it started. */
async function startAttempt(
  deps: GenerationDeps,
  jobId: string,
  runId: string,
  now: () => number,
): Promise<{ attempt: number; startedAt: number }> {
  const { redis } = deps;
  const stateKey = jobKeys.state(jobId);
  const attempt = await redis.hincrby(stateKey, "attempts" satisfies JobField, 1);
  const startedAt = now();
  const running = redis.multi().hset(stateKey, {
    status: "RUNNING",
    worker_id: deps.workerId,
    run_id: runId,
    attempt_started_at: new Date(startedAt).toISOString(),
  } satisfies JobHash);
  await execPipeline(syncStatusIndex(running, JOB_STATUS_INDEXING, stateKey, jobId));
  await redis.hsetnx(stateKey, "started_at" satisfies JobField, new Date(startedAt).toISOString());
  return { attempt, startedAt };
}

/**
 * One attempt: streams the model's output to the job and finishes it COMPLETED, or CANCELLED with
 * what was written when it was cut short; a hand-back says so. Any other failure is answered for
 * generate to decide about (a retry, or FAILED).
 */
async function tryOnce(
  run: AttemptContext,
  provider: Provider,
  attempt: number,
  startedAt: number,
): Promise<GenerationOutcome | { error: unknown }> {
  const { deps, command, writer, runId, signal, now, model } = run;
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
    signal.throwIfAborted();
    return finish(deps, command, writer, runId, "COMPLETED", {
      output,
      startedAt,
      firstTokenAt,
      reported,
      stoppedBecause,
      now,
      model,
      attempt,
    });
  } catch (error) {
    const reason = signal.reason ?? error;
    if (reason instanceof HandBack) {
      deps.log("info", "handing a job back", { job_id: command.job_id, reason: reason.message });
      return "handed-back";
    }
    if (signal.aborted)
      return finish(deps, command, writer, runId, "CANCELLED", {
        output,
        startedAt,
        firstTokenAt,
        now,
        model,
        attempt,
      });
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
  now: () => number;
  model: ModelInfo | undefined;
  attempt: number;
}

/** Final state, final stream message and expiry of every key in one MULTI; then the audit event. */
async function finish(
  deps: GenerationDeps,
  command: GenerationCommand,
  writer: StreamWriter,
  runId: string,
  status: JobStatus,
  facts: FinishFacts,
): Promise<GenerationOutcome> {
  const { redis } = deps;
  const id = command.job_id;
  const end = facts.now();
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
  const createdAt =
    Date.parse((await redis.hget(jobKeys.state(id), "created_at" satisfies JobField)) ?? "") || facts.startedAt;
  const finishReason = finishReasonOf(status, facts.stoppedBecause, usage.completion_tokens, command.max_tokens);
  const fields: JobHash = {
    status,
    finish_reason: finishReason,
    output,
    usage: JSON.stringify(usage),
    ...costFields(command.model_name, facts.model, usage),
    completed_at: new Date(end).toISOString(),
    generation_ms: String(generationMs),
    queued_ms: String(Math.max(0, facts.startedAt - createdAt)),
    ttft_ms: ttftMs === null ? "" : String(ttftMs),
    tokens_per_second: tokensPerSecond === null ? "" : String(tokensPerSecond),
    model_version: facts.model?.version ?? command.model_name,
  };
  if (facts.error) fields.error = facts.error;
  const commands: RedisCommand[] = [
    ["HSET", jobKeys.state(id), ...jobHashArgs(fields)],
    ...writer.final(status, finishReason),
    ...statusIndexCommands(JOB_STATUS_INDEXING, { tenantId: command.tenant_id, id, createdAtMs: createdAt, status }),
  ];
  for (const key of [jobKeys.state(id), jobKeys.events(id)]) commands.push(["EXPIRE", key, FINISHED_JOB_TTL_S]);
  if (!(await writeIfLeaseHeld(redis, jobKeys.lease(id), runId, commands))) {
    deps.log("warn", "another run holds the job now; this run's result is dropped", { job_id: id });
    throw new HandBack("lease lost");
  }
  recordJobFinished({
    model: command.model_name,
    tenantId: command.tenant_id,
    status,
    durationMs: generationMs,
    ttftMs,
    tokensPerSecond,
  });
  const record = await readJobRecord(redis, id);
  if (!record) throw new Error(`job ${id}: its record does not parse after the final write`);
  await emitAfterFinal(deps, command, record);
  return "finished";
}

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
 * to the DLQ, then the audit event (last: once `audited` is set the job may be deleted).
 */
async function emitAfterFinal(deps: GenerationDeps, command: GenerationCommand, record: JobRecord): Promise<void> {
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
  if (!record.audited) await emitAudit(deps, command.job_id, record);
}

/** One event per finished job on ai.generation.completed: the audit log. */
async function emitAudit(deps: GenerationDeps, jobId: string, record: JobRecord): Promise<void> {
  const { status } = record;
  if (!isFinalJob(status)) throw new Error(`job ${jobId}: an audit event before its final state (${status})`);
  const event = jobAuditEvent({ ...record, status }, deps.workerId);
  await deps.producer.send({
    topic: TOPICS.completed.name,
    acks: -1,
    messages: [{ key: record.tenant_id, value: JSON.stringify(event) }],
  });
  await deps.redis.hset(jobKeys.state(jobId), { audited: "1" } satisfies JobHash);
}
