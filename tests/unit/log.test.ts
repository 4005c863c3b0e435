import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers";

/** The logger as a process writes it: run in a child Node, as the worker runs (tsx), so its stderr is what an operator reads. */
function logsOf(env: Record<string, string>): Record<string, unknown>[] {
  const script = `const { createLog } = require("./lib/log");
const log = createLog("worker:w1");
log("info", "job started", { job_id: "j1", api_key: "k-123", authorization: "Bearer k-123" });
log("warn", "slow", { ms: 1200 });
log("error", "failed", { error: "boom" });
log("error", "thrown", { error: new TypeError("bad input") });`;
  const child = spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  expect(child.stdout).toBe("");
  return child.stderr
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

// Each case starts a Node process with tsx: seconds on a busy machine.
describe("the logger", { timeout: 60_000 }, () => {
  it("writes one JSON line per event on stderr, with time, level, component and message, and never a secret-looking field", () => {
    const lines = logsOf({ LOG_LEVEL: "info" });
    expect(lines).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        level: "info",
        component: "worker:w1",
        message: "job started",
        job_id: "j1",
        api_key: "[redacted]",
        authorization: "[redacted]",
      },
      { time: expect.any(String), level: "warn", component: "worker:w1", message: "slow", ms: 1200 },
      { time: expect.any(String), level: "error", component: "worker:w1", message: "failed", error: "boom" },
      {
        time: expect.any(String),
        level: "error",
        component: "worker:w1",
        message: "thrown",
        error: {
          type: "TypeError",
          message: "bad input",
          stack: expect.stringMatching(/^TypeError: bad input\n\s+at /),
        },
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain("k-123");
  });

  it("writes only what LOG_LEVEL lets through, and info when it is not set", () => {
    expect(logsOf({ LOG_LEVEL: "warn" }).map((l) => l.level)).toEqual(["warn", "error", "error"]);
    expect(logsOf({ LOG_LEVEL: "silent" })).toEqual([]);
    expect(logsOf({ LOG_LEVEL: "" }).map((l) => l.level)).toEqual(["info", "warn", "error", "error"]);
  });
});
