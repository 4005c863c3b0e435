/**
 * Lines a Node process prints when an exception or a rejection reached no handler: Next.js logs
 * "⨯ uncaughtException: …" / "⨯ unhandledRejection: …" and carries on; plain Node prints the
 * stack, "[UnhandledPromiseRejection: …]" or "Node.js v20…" as it dies. The test stacks check their
 * processes' output for them, so such a bug fails a suite instead of hiding in a log.
 */
const UNCAUGHT = /uncaughtException|unhandledRejection|UnhandledPromiseRejection|^Node\.js v\d+\.\d+\.\d+$/;

/** Each offending line, with the few lines after it (the error and the top of its stack). */
export function findUncaught(output: string): string[] {
  const lines = output.split("\n");
  const found: string[] = [];
  lines.forEach((line, at) => {
    if (UNCAUGHT.test(line.trim())) found.push(lines.slice(Math.max(0, at - 1), at + 4).join("\n"));
  });
  return found;
}

/** Throws, quoting the offending lines, if `output` shows an uncaught exception or unhandled rejection. */
export function assertNoUncaught(output: string, who: string): void {
  const found = findUncaught(output);
  if (found.length === 0) return;
  const shown = found.slice(0, 5).join("\n---\n");
  throw new Error(
    `${who} logged ${found.length} uncaught exception(s) or unhandled rejection(s):\n${shown}${found.length > 5 ? `\n… and ${found.length - 5} more` : ""}`,
  );
}
