import { loadEnvConfig } from "@next/env";
import { createLog } from "./log";

/**
 * Reads `.env`, `.env.local` and their per-mode siblings (`.env.production`, …) from `dir` into
 * process.env the way `next start` does for the web server, so `npm start` and the worker see the
 * same settings. A variable already set in the environment wins over every file; `.env.local`
 * wins over `.env`. Returns the files it read.
 */
export function loadEnvFiles(dir: string, options: { dev?: boolean; forceReload?: boolean } = {}): string[] {
  const quiet = {
    info: () => {},
    error: (...args: unknown[]) => createLog("env")("error", args.map(String).join(" ")),
  };
  const { loadedEnvFiles } = loadEnvConfig(dir, options.dev ?? false, quiet, options.forceReload ?? false);
  return loadedEnvFiles.map((file) => file.path);
}
