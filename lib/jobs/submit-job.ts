import { createHash } from "node:crypto";
import type { Message, Producer } from "kafkajs";
import { ApiError, brokerUnavailable, validationError } from "../errors";
import type { Redis } from "../redis";
import { TOPICS } from "../topics";
import { traceHeaders } from "../tracing";
import { completeCommand, type CommandInput, type GenerationCommand } from "./command";
import { addToTenantIndex } from "../tenant-index";
import { jobHashArgs, jobRecordSchema, type JobField, type JobHash } from "./job-record";
import { JOB_INDEX_BOUND, jobKeys, OPEN_JOB_TTL_S } from "./keys";
import type { ModelInfo } from "./providers/provider";
import { readJob, toJobView, type JobView } from "./read-job";

export interface SubmitDeps {
  redis: Redis;
  producer: () => Promise<Producer>;
  models: ModelInfo[];
  now?: () => Date;
}

export type SubmitResult = { created: true; job: JobView } | { created: false; job: JobView };

// Creates the state record only if the job id is new; otherwise returns the stored fingerprint.
// The fields named here and in RELEASE_CLAIM are job-record.ts's.
const CLAIM_JOB = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGET', KEYS[1], 'fingerprint') or '', redis.call('HGET', KEYS[1], 'tenant_id') or ''}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return {1, '', ''}`;

// Takes back a claim whose command never reached the broker, unless something else moved it on.
const RELEASE_CLAIM = `
if redis.call('HGET', KEYS[1], 'submitting') == '1' and redis.call('HGET', KEYS[1], 'status') == 'QUEUED' then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** What makes two submissions "the same body": the fields the client chose, not the defaults we filled. */
function fingerprintOf(input: CommandInput): string {
  const chosen = [input.tenant_id, input.model_name, input.prompt, input.temperature, input.max_tokens, input.timestamp ?? null];
  return createHash("sha256").update(JSON.stringify(chosen)).digest("hex");
}

/**
 * Accepts a command: claims its job id in Redis, produces it to ai.generation.requests keyed by
 * tenant with acks -1, and only then reports it queued. If the broker does not acknowledge, the
 * claim is taken back and the caller gets a 503: no job id is handed out for a command not logged.
 */
export async function submitJob(deps: SubmitDeps, tenantId: string, input: CommandInput): Promise<SubmitResult> {
  if (input.tenant_id !== tenantId) throw new ApiError("forbidden", "tenant_id does not match the API key's tenant.");
  if (!deps.models.some((m) => m.id === input.model_name)) {
    throw validationError([{ path: "model_name", message: `There is no model "${input.model_name}"; choose one of: ${deps.models.map((m) => m.id).join(", ")}` }]);
  }
  const now = (deps.now ?? (() => new Date()))();
  const command = completeCommand(input, now);
  const fingerprint = fingerprintOf(input);
  const state = initialState(command, fingerprint, now);
  const stateKey = jobKeys.state(command.job_id);

  const [claimed, storedFingerprint, storedTenant] = (await deps.redis.eval(
    CLAIM_JOB,
    1,
    stateKey,
    OPEN_JOB_TTL_S,
    ...jobHashArgs(state),
  )) as [number, string, string];
  if (!claimed) {
    const existing = storedTenant === tenantId && storedFingerprint === fingerprint ? await readJob(deps.redis, tenantId, command.job_id) : undefined;
    if (!existing) throw new ApiError("conflict", `job_id ${command.job_id} is already used by a different command.`);
    return { created: false, job: existing };
  }

  try {
    const producer = await deps.producer();
    await batcherFor(producer).send({ key: command.tenant_id, value: JSON.stringify(command), headers: { "content-type": "application/json", ...traceHeaders() } });
  } catch {
    await deps.redis.eval(RELEASE_CLAIM, 1, stateKey).catch(() => {});
    throw brokerUnavailable("The job log is unreachable right now; the job was not accepted. Try again shortly.");
  }
  await revealJob(deps.redis, tenantId, command.job_id, now.getTime(), now.getTime());
  return { created: true, job: toJobView(jobRecordSchema.parse(state), "") };
}

/**
 * Makes an accepted job visible to reads and lists. The submitter does it once the broker has
 * acknowledged the command; the worker does it too when it gets a job still marked `submitting`,
 * whose submitter died (or lost Redis) between the acknowledgement and this write.
 */
export async function revealJob(redis: Redis, tenantId: string, jobId: string, createdAtMs: number, nowMs = Date.now()): Promise<void> {
  await addToTenantIndex(redis.multi().hdel(jobKeys.state(jobId), "submitting" satisfies JobField), jobKeys.tenantIndex(tenantId), jobId, createdAtMs, JOB_INDEX_BOUND, nowMs).exec();
}

function initialState(command: GenerationCommand, fingerprint: string, now: Date): JobHash {
  return {
    job_id: command.job_id,
    tenant_id: command.tenant_id,
    model_name: command.model_name,
    prompt: command.prompt,
    temperature: String(command.temperature),
    max_tokens: String(command.max_tokens),
    timestamp: command.timestamp,
    status: "QUEUED",
    created_at: now.toISOString(),
    attempts: "0",
    fingerprint,
    submitting: "1",
  };
}

/** A produce request stays well under a broker's default limit on a record batch (1 MiB). */
const BATCH_MAX_BYTES = 512 * 1024;

/**
 * Commands accepted in the same turn of the event loop go to the broker in one produce request.
 * Under a burst that is one encoding and one acknowledgement for many submissions instead of one
 * each, and each partition gets one record batch, which a worker then fetches and works through
 * in one go. Every submission still answers only once the broker acknowledged (acks -1) the
 * request holding its own command; if that fails, each of them takes its claim back and answers 503.
 */
class CommandBatcher {
  private open: OpenBatch | undefined;

  constructor(private readonly producer: Producer) {}

  send(message: Message & { value: string }): Promise<void> {
    const bytes = Buffer.byteLength(message.value);
    if (this.open && this.open.bytes + bytes > BATCH_MAX_BYTES) this.open = undefined; // full: it goes as it is
    const batch = (this.open ??= this.start());
    batch.messages.push(message);
    batch.bytes += bytes;
    return batch.sent;
  }

  private start(): OpenBatch {
    const batch: OpenBatch = { messages: [], bytes: 0, sent: Promise.resolve() };
    batch.sent = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      if (this.open === batch) this.open = undefined;
      await this.producer.send({ topic: TOPICS.requests.name, acks: -1, messages: batch.messages });
    });
    return batch;
  }
}

interface OpenBatch {
  messages: Message[];
  bytes: number;
  sent: Promise<void>;
}

const batchers = new WeakMap<Producer, CommandBatcher>();

function batcherFor(producer: Producer): CommandBatcher {
  let batcher = batchers.get(producer);
  if (!batcher) batchers.set(producer, (batcher = new CommandBatcher(producer)));
  return batcher;
}
