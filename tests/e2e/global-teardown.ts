import { rmSync } from "node:fs";
import type { Stack } from "../../scripts/lib/stack";
import { STACK_FILE } from "./stack-file";

export default async function globalTeardown() {
  const holder = globalThis as { __e2eStack?: Stack };
  const stack = holder.__e2eStack;
  holder.__e2eStack = undefined;
  rmSync(STACK_FILE, { force: true });
  await stack?.stop();
  // Last, so the check also covers shutdown; a throw here fails the run.
  stack?.assertNoUncaught();
}
