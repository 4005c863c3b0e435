import { createHash } from "node:crypto";
import { acceptWork, type AcceptDeps, type WorkKind } from "../accept/accept-work";
import { ApiError, validationError } from "../errors";
import { TOPICS } from "../topics";
import { traceHeaders } from "../tracing";
import { completeCommand, type CommandInput, type GenerationCommand } from "./command";
import { jobRecordSchema, type JobHash } from "./job-record";
import { JOB_STATUS_INDEXING, jobKeys, OPEN_JOB_TTL_S } from "./keys";
import type { ModelInfo } from "./providers/provider";
import { readJob, toJobView, type JobView } from "./read-job";

export interface SubmitDeps extends AcceptDeps {
  models: ModelInfo[];
  now?: () => Date;
}

export type SubmitResult = { created: true; job: JobView } | { created: false; job: JobView };

/** A job as lib/accept takes it: its job_id is its idempotency key. */
export const JOB_WORK: WorkKind<JobView> = {
  noun: "job",
  topic: TOPICS.requests.name,
  recordKey: jobKeys.state,
  ...JOB_STATUS_INDEXING,
  ttlS: OPEN_JOB_TTL_S,
  read: readJob,
  unreachable: "The job log is unreachable right now; the job was not accepted. Try again shortly.",
};

/** What makes two submissions "the same body": the fields the client chose, not the defaults we filled. */
function fingerprintOf(input: CommandInput): string {
  const chosen = [
    input.tenant_id,
    input.model_name,
    input.prompt,
    input.temperature,
    input.max_tokens,
    input.timestamp ?? null,
  ];
  return createHash("sha256").update(JSON.stringify(chosen)).digest("hex");
}

/**
 * Accepts a command (see lib/accept for the protocol and its idempotency): claims its job id in
 * Redis, produces it to ai.generation.requests keyed by tenant with acks -1, and only then reports
 * it queued. If the broker does not acknowledge, the claim is taken back and the caller gets a
 * 503: no job id is handed out for a command not logged. `extra` is written on the record beside
 * the command's fields (what a Response echoes; lib/responses).
 */
export async function submitJob(
  deps: SubmitDeps,
  tenantId: string,
  input: CommandInput,
  extra: Pick<JobHash, "response"> = {},
): Promise<SubmitResult> {
  if (input.tenant_id !== tenantId) throw new ApiError("forbidden", "tenant_id does not match the API key's tenant.");
  if (!deps.models.some((m) => m.id === input.model_name)) {
    throw validationError([
      {
        path: "model_name",
        message: `There is no model "${input.model_name}"; choose one of: ${deps.models.map((m) => m.id).join(", ")}`,
      },
    ]);
  }
  const now = (deps.now ?? (() => new Date()))();
  const command = completeCommand(input, now);
  const state: JobHash = { ...initialState(command, now), ...extra };
  const accepted = await acceptWork(deps, JOB_WORK, {
    tenantId,
    id: command.job_id,
    keyName: `job_id ${command.job_id}`,
    fingerprint: fingerprintOf(input),
    fields: state,
    message: {
      key: command.tenant_id,
      value: JSON.stringify(command),
      headers: { "content-type": "application/json", ...traceHeaders() },
    },
    createdAtMs: now.getTime(),
  });
  if (!accepted.created) return { created: false, job: accepted.existing };
  return { created: true, job: toJobView(jobRecordSchema.parse(state), "") };
}

function initialState(command: GenerationCommand, now: Date): JobHash {
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
  };
}
