import path from "node:path";
import { loadEnvFiles } from "../lib/env-files";
import { startBanner } from "./lib/banner";
import { buildIfStale } from "./lib/build";
import { checkStackEnv, startStack } from "./lib/stack";

/** `npm start`: the whole of Dispatch on one machine, embedded parts where nothing else is set. */
async function main() {
  const root = path.resolve(__dirname, "..");
  const dev = process.argv.includes("--dev");
  // .env and .env.local fill what the shell did not set; the web server and workers inherit them.
  loadEnvFiles(root, { dev });
  // Before the build and before any process starts: a bad value stops here, named.
  checkStackEnv(process.env);
  if (!dev) buildIfStale(root);
  const stack = await startStack({
    root,
    dataDir: path.resolve(root, process.env.DATA_DIR || ".data"),
    env: process.env,
    dev,
  });
  process.stdout.write(startBanner(stack));
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
  // A ConfigError's message names every bad variable: no stack trace for an operator's typo.
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
