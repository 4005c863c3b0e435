/**
 * A worker-equivalent process for the fan-out figure. With one job at a time per partition and six
 * partitions, Kafka never lets one worker stream more than six jobs at once; to measure what the
 * streaming path does with N jobs streaming together, this process runs the worker's own per-job
 * code (runGeneration: lease, state, StreamWriter, local-ngram at its pace, final state, audit
 * event) for N commands concurrently. Driven over IPC by scripts/bench/figures/fan-out.ts.
 */
import { parseConfig } from "../../lib/config";
import { createAuditArchive } from "../../lib/jobs/audit-archive";
import type { GenerationCommand } from "../../lib/jobs/command";
import { listModels } from "../../lib/jobs/list-models";
import { createProviders } from "../../lib/jobs/providers";
import { runGeneration, type GenerationDeps } from "../../lib/jobs/run-generation";
import { createKafka, createProducer } from "../../lib/kafka";
import { createLog } from "../../lib/log";
import { createRedis } from "../../lib/redis";

type Command = { type: "go"; commands: GenerationCommand[] };

async function main() {
  const config = parseConfig(process.env);
  const redis = createRedis(config.REDIS_URL);
  const producer = createProducer(createKafka(config.KAFKA_BROKERS, "dispatch-bench-generator"));
  await producer.connect();
  const deps: GenerationDeps = {
    redis,
    producer,
    log: createLog("bench-generator"),
    workerId: "bench-generator",
    models: listModels(config),
    providerFor: createProviders(config),
    running: new Map(),
    // As a worker of the stack: its events in the audit archive too when the stack keeps one.
    auditArchive: config.AUDIT_ARCHIVE_DIR
      ? createAuditArchive(config.AUDIT_ARCHIVE_DIR, "bench-generator")
      : undefined,
  };
  const shutdown = new AbortController();
  process.once("message", async (message: Command) => {
    const started = performance.now();
    const outcomes = await Promise.all(
      message.commands.map((command) =>
        runGeneration(deps, command, {
          heartbeat: async () => {},
          shutdown: shutdown.signal,
          runId: `bench-generator:${command.job_id}`,
        }),
      ),
    );
    await deps.auditArchive?.close();
    await producer.disconnect().catch(() => {});
    redis.disconnect();
    process.send!(
      { type: "done", ms: performance.now() - started, finished: outcomes.filter((o) => o === "finished").length },
      () => process.exit(0),
    );
  });
  process.send!({ type: "ready" });
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
