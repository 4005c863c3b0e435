import { execPipeline, type Redis } from "../redis";
import { syncStatusIndex } from "../status-index";
import { jobHashArgs, type JobHash } from "./job-record";
import { CANCEL_CHANNEL, FINISHED_JOB_TTL_S, JOB_STATUS_INDEXING, jobKeys } from "./keys";
import { readJob, type JobView } from "./read-job";
import { finalStreamMessage } from "./stream-message";

// A queued job is cancelled here at once, with its final stream message; a running one is flagged
// and the worker holding it is told. Final jobs are left as they are (cancel is idempotent). The
// final message and the fields written come from TypeScript (ARGV[4..6]); the script only numbers
// the message and reads `status`, job-record.ts's field.
const CANCEL = `
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'QUEUED' then
  local final = cjson.decode(ARGV[4])
  final['seq'] = redis.call('LLEN', KEYS[2]) + 1
  final = cjson.encode(final)
  redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[5])))
  redis.call('RPUSH', KEYS[2], final)
  redis.call('PUBLISH', KEYS[3], final)
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  redis.call('EXPIRE', KEYS[2], ARGV[1])
elseif status == 'RUNNING' then
  redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[6])))
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return status`;

export async function cancelJob(
  redis: Redis,
  tenantId: string,
  jobId: string,
  now = new Date(),
): Promise<JobView | undefined> {
  if (!(await readJob(redis, tenantId, jobId))) return undefined;
  const cancelledWhileQueued: JobHash = {
    status: "CANCELLED",
    finish_reason: "cancelled",
    cancel_requested: "1",
    completed_at: now.toISOString(),
    output: "",
  };
  const cancelRequested: JobHash = { cancel_requested: "1" };
  // The job's entry in the status indexes moves with the cancel, in the same MULTI.
  const cancel = redis
    .multi()
    .eval(
      CANCEL,
      3,
      jobKeys.state(jobId),
      jobKeys.events(jobId),
      jobKeys.stream(jobId),
      FINISHED_JOB_TTL_S,
      CANCEL_CHANNEL,
      jobId,
      JSON.stringify(finalStreamMessage("CANCELLED", "cancelled")),
      JSON.stringify(jobHashArgs(cancelledWhileQueued)),
      JSON.stringify(jobHashArgs(cancelRequested)),
    );
  await execPipeline(syncStatusIndex(cancel, JOB_STATUS_INDEXING, jobKeys.state(jobId), jobId));
  return readJob(redis, tenantId, jobId);
}
