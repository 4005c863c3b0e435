import type { Redis } from "../redis";
import type { JobField } from "./job-record";
import { statusIndexKey } from "../status-index";
import { jobKeys } from "./keys";
import { JOB_STATUSES } from "./status";

// `audited` is the last thing a worker writes to a job (after its final state and the audit
// event): removing the record before it would leave a stray hash with no expiry behind.
const DELETE_IF_AUDITED = `
if redis.call('HGET', KEYS[1], ARGV[2]) ~= '1' then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1`;

/**
 * Removes a job the workers are done with: its record, its stream and its place in the tenant's
 * list and its status's. False while it is not (not final, or its audit event not yet written); its audit event
 * and webhook deliveries stay, as the log of what happened.
 */
export async function deleteSettledJob(redis: Redis, tenantId: string, jobId: string): Promise<boolean> {
  const tenantIndex = jobKeys.tenantIndex(tenantId);
  const indexes = [tenantIndex, ...JOB_STATUSES.map((status) => statusIndexKey(tenantIndex, status))];
  const deleted = await redis.eval(
    DELETE_IF_AUDITED,
    2 + indexes.length,
    jobKeys.state(jobId),
    jobKeys.events(jobId),
    ...indexes,
    jobId,
    "audited" satisfies JobField,
  );
  return deleted === 1;
}
