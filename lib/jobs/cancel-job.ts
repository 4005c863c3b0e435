import type { Redis } from "../redis";
import { CANCEL_CHANNEL, FINISHED_JOB_TTL_S, jobKeys } from "./keys";
import { readJob, type JobView } from "./read-job";

// A queued job is cancelled here at once, with its final stream message; a running one is flagged
// and the worker holding it is told. Final jobs are left as they are (cancel is idempotent).
const CANCEL = `
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'QUEUED' then
  local seq = redis.call('LLEN', KEYS[2]) + 1
  local final = cjson.encode({seq = seq, delta = '', is_final = true, status = 'CANCELLED', finish_reason = 'cancelled'})
  redis.call('HSET', KEYS[1], 'status', 'CANCELLED', 'finish_reason', 'cancelled', 'cancel_requested', '1', 'completed_at', ARGV[1], 'output', '')
  redis.call('RPUSH', KEYS[2], final)
  redis.call('PUBLISH', KEYS[3], final)
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  redis.call('EXPIRE', KEYS[2], ARGV[2])
elseif status == 'RUNNING' then
  redis.call('HSET', KEYS[1], 'cancel_requested', '1')
  redis.call('PUBLISH', ARGV[3], ARGV[4])
end
return status`;

export async function cancelJob(redis: Redis, tenantId: string, jobId: string, now = new Date()): Promise<JobView | undefined> {
  if (!(await readJob(redis, tenantId, jobId))) return undefined;
  await redis.eval(CANCEL, 3, jobKeys.state(jobId), jobKeys.events(jobId), jobKeys.stream(jobId), now.toISOString(), FINISHED_JOB_TTL_S, CANCEL_CHANNEL, jobId);
  return readJob(redis, tenantId, jobId);
}
