import path from "node:path";
import { parseConfig } from "../lib/config";
import { loadEnvFiles } from "../lib/env-files";
import { createKafka } from "../lib/kafka";
import { createLog } from "../lib/log";
import { createRedis } from "../lib/redis";
import { rebuildJobUsage } from "../lib/usage/rebuild-usage";

/**
 * `npm run usage:rebuild`: every tenant's job usage aggregates again from the audit topic
 * (ai.generation.completed) and, when AUDIT_ARCHIVE_DIR is set, the audit archive, with the
 * deployment's REDIS_URL and KAFKA_BROKERS. Stop the workers first: a job finishing while it runs
 * may be lost to the replacement (see rebuildJobUsage).
 */
async function main() {
  loadEnvFiles(path.resolve(__dirname, ".."));
  const config = parseConfig(process.env);
  const log = createLog("usage-rebuild");
  const redis = createRedis(config.REDIS_URL);
  try {
    const report = await rebuildJobUsage({
      redis,
      kafka: createKafka(config.KAFKA_BROKERS, "usage-rebuild"),
      log,
      auditArchiveDir: config.AUDIT_ARCHIVE_DIR,
    });
    log("info", "usage aggregates rebuilt", { ...report });
  } finally {
    redis.disconnect();
  }
}

main().catch((error: unknown) => {
  createLog("usage-rebuild")("error", "the rebuild failed", { error });
  process.exitCode = 1;
});
