import { execFileSync } from "node:child_process";
import os from "node:os";

export interface Machine {
  nproc: number;
  memoryGiB: number;
  cpuModel: string;
  node: string;
  kernel: string;
  commit: string;
}

export function describeMachine(root: string): Machine {
  let commit = "unknown";
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: root, encoding: "utf8" }).trim() !== "";
    commit = `${head}${dirty ? " + uncommitted changes" : ""}`;
  } catch {
    // not a git checkout
  }
  return {
    nproc: os.availableParallelism(),
    memoryGiB: os.totalmem() / 2 ** 30,
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    commit,
  };
}

export const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100);
