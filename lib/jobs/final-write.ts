import { LEASE_ALLOWS_LUA, type RedisCommand } from "../lease";
import type { Redis } from "../redis";
import { redisScript } from "../redis-script";
import { COUNT_ONCE_LUA } from "../usage/record-usage";
import { jobKeys } from "./keys";
import { FINAL_JOB_STATUSES } from "./status";

// A run's final write, one script (one round trip): refused while another run holds the lease, and
// refused when the job is final already (a run whose lease lapsed, and whose job another run then
// took and finished, must not write a second result and a second final message). Then the write,
// and in the same step the job's usage, counted once (record-usage.ts): no crash can leave a final
// state without its count, and no redelivery counts it again.
// KEYS: the lease, the job's state. ARGV: the run, the commands (JSON), the count's spec or ''.
const FINAL_WRITE = redisScript(`${LEASE_ALLOWS_LUA}${COUNT_ONCE_LUA}
if not leaseAllows(KEYS[1], ARGV[1]) then return 0 end
local status = redis.call('HGET', KEYS[2], 'status')
if ${FINAL_JOB_STATUSES.map((s) => `status == '${s}'`).join(" or ")} then return -1 end
for _, command in ipairs(cjson.decode(ARGV[2])) do redis.call(unpack(command)) end
if ARGV[3] ~= '' then countOnce(KEYS[2], ARGV[3]) end
return 1`);

export type FinalWrite = "written" | "lease-lost" | "final-already";

/** Writes a job's final state (`commands`) under `runId`'s lease, with its usage count when `usageSpec` is given (jobCountSpec). */
export async function writeFinal(
  redis: Redis,
  jobId: string,
  runId: string,
  commands: RedisCommand[],
  usageSpec?: string,
): Promise<FinalWrite> {
  const words = commands.map((command) => command.map(String));
  const result = await FINAL_WRITE.run(
    redis,
    [jobKeys.lease(jobId), jobKeys.state(jobId)],
    [runId, JSON.stringify(words), usageSpec ?? ""],
  );
  return result === 1 ? "written" : result === -1 ? "final-already" : "lease-lost";
}
