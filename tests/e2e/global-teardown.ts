import { rmSync } from "node:fs";
import type { Stack } from "../../scripts/lib/stack";
import { STACK_FILE } from "./stack-file";

export default async function globalTeardown() {
  const holder = globalThis as { __e2eStack?: Stack };
  await holder.__e2eStack?.stop();
  holder.__e2eStack = undefined;
  rmSync(STACK_FILE, { force: true });
}
