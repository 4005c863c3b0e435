import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { loadEnvFiles } from "@/lib/env-files";

/** .env and .env.local as npm start and the worker read them: the shell first, then .env.local, then .env. */
const dir = mkdtempSync(path.join(tmpdir(), "dispatch-env-"));
const names = ["DISPATCH_TEST_ONLY_ENV", "DISPATCH_TEST_BOTH", "DISPATCH_TEST_SHELL", "DISPATCH_TEST_LOCAL_ONLY"];
// process.env's type makes NODE_ENV read-only; at run time it is an ordinary variable.
const env = process.env as Record<string, string | undefined>;
const nodeEnv = env.NODE_ENV;

afterEach(() => {
  for (const name of names) delete process.env[name];
  env.NODE_ENV = nodeEnv;
  rmSync(dir, { recursive: true, force: true });
});

it("fills unset variables from .env and .env.local, .env.local winning, the environment winning over both", () => {
  writeFileSync(
    path.join(dir, ".env"),
    "DISPATCH_TEST_ONLY_ENV=from-env\nDISPATCH_TEST_BOTH=from-env\nDISPATCH_TEST_SHELL=from-env\n",
  );
  writeFileSync(path.join(dir, ".env.local"), "DISPATCH_TEST_BOTH=from-local\nDISPATCH_TEST_LOCAL_ONLY=from-local\n");
  process.env.DISPATCH_TEST_SHELL = "from-shell";
  // As npm start and the worker run: a production process (vitest's NODE_ENV=test skips .env.local, as Next does).
  env.NODE_ENV = "production";
  const read = loadEnvFiles(dir, { forceReload: true });
  expect(read.sort()).toEqual([".env", ".env.local"]);
  expect(names.map((n) => process.env[n])).toEqual(["from-env", "from-local", "from-shell", "from-local"]);
});
