import path from "node:path";
import { buildIfStale } from "./lib/build";
import { startStack } from "./lib/stack";

/** `npm start`: the whole of Dispatch on one machine, embedded parts where nothing else is set. */
async function main() {
  const root = path.resolve(__dirname, "..");
  const dev = process.argv.includes("--dev");
  if (!dev) buildIfStale(root);
  const stack = await startStack({ root, dataDir: path.join(root, process.env.DATA_DIR ?? ".data"), env: process.env, dev });
  const embedded = [stack.redis && "Redis", stack.broker && "Kafka (librdkafka mock cluster)"].filter(Boolean).join(", ");
  process.stdout.write(
    [
      "",
      `  Dispatch     ${stack.url}`,
      `  API key      ${stack.apiKey}   (tenant ${String(stack.env.API_KEYS).split(":")[0]})`,
      `  Redis        ${stack.env.REDIS_URL}`,
      `  Kafka        ${stack.env.KAFKA_BROKERS}`,
      `  Workers      ${stack.workers.length}`,
      embedded ? `  Embedded     ${embedded}` : "",
      "",
      "ready",
      "",
    ].join("\n"),
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write("stopping…\n");
    await stack.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  stack.web.child.on("exit", (code, signal) => {
    if (stopping) return;
    process.stderr.write(`the web server exited (${signal ?? code}); stopping everything\n`);
    void stop();
  });
  // A crashed worker is started again; its jobs were handed back to the group meanwhile.
  const supervise = (worker: (typeof stack.workers)[number]) =>
    worker.child.once("exit", (code, signal) => {
      if (stopping) return;
      process.stderr.write(`${worker.name} exited (${signal ?? code}); restarting it in 1 s\n`);
      setTimeout(() => {
        if (stopping) return;
        worker.restart();
        supervise(worker);
      }, 1000);
    });
  stack.workers.forEach(supervise);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
