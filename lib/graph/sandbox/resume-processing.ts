import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { limitsOf, type SandboxDeps } from "./deps";
import { resumeIfStale } from "./process-container";
import { keys, readContainerRecord, videosDir, visibleStatusCode } from "./store";
import { removeFile } from "../../remove-file";

/** A kept file younger than this is never swept: its attempt may be between rename and settle. */
const FILE_GRACE_MS = 10 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;
const lastSweep = new WeakMap<SandboxDeps, number>();

/**
 * Start-up pass: takes over every IN_PROGRESS container whose processor died with the previous
 * process, and removes video files nothing refers to. Containers still beating (a restart faster
 * than the stale window) are looked at once more when that window has passed.
 */
export async function resumeSandboxProcessing(
  deps: SandboxDeps,
  options: { recheck?: boolean } = {},
): Promise<{ resumed: number; waiting: number }> {
  let resumed = 0;
  let waiting = 0;
  for (const id of await deps.redis.smembers(keys.processing)) {
    const container = await readContainerRecord(deps.redis, id);
    if (!container || visibleStatusCode(container, deps.now()) !== "IN_PROGRESS") {
      await deps.redis.srem(keys.processing, id);
      continue;
    }
    const result = await resumeIfStale(deps, container);
    if (result.resumed) resumed++;
    else if (visibleStatusCode(result.container, deps.now()) === "IN_PROGRESS") waiting++;
  }
  await sweepVideoFiles(deps);
  if (waiting > 0 && options.recheck !== false) {
    const limits = limitsOf(deps);
    setTimeout(() => {
      resumeSandboxProcessing(deps, { recheck: false }).catch((error: unknown) => {
        deps.log("warn", "sandbox resume recheck failed", { error });
      });
    }, limits.staleAfterMs + limits.heartbeatMs).unref();
  }
  if (resumed > 0 || waiting > 0) deps.log("info", "sandbox processing resumed", { resumed, waiting });
  return { resumed, waiting };
}

/** Sweeps in the background at most once an hour, so a long-running server does not keep expired downloads. */
export function sweepVideoFilesNowAndThen(deps: SandboxDeps): void {
  const last = lastSweep.get(deps);
  if (last !== undefined && Date.now() - last < SWEEP_EVERY_MS) return;
  lastSweep.set(deps, Date.now());
  sweepVideoFiles(deps).catch((error: unknown) => {
    deps.log("warn", "sandbox file sweep failed", { error });
  });
}

/**
 * Removes downloads of containers that ended in ERROR, expired, were taken over, or whose records
 * expired (published reels, after mediaTtlMs). Kept videos of FINISHED and PUBLISHED containers stay.
 */
export async function sweepVideoFiles(deps: SandboxDeps): Promise<number> {
  lastSweep.set(deps, Date.now());
  const root = videosDir(deps);
  let removed = 0;
  for (const file of await listVideoFiles(root)) {
    const match = /^(\d+)-([0-9a-f]+)\.(part|mp4|mov)$/.exec(path.basename(file));
    if (!match) continue;
    const [, containerId = "", owner] = match;
    const container = await readContainerRecord(deps.redis, containerId);
    const status = container ? visibleStatusCode(container, deps.now()) : undefined;
    const inUse =
      container !== undefined &&
      ((status === "IN_PROGRESS" && container.owner === owner) ||
        ((status === "FINISHED" || status === "PUBLISHED") && container.file === file));
    if (inUse) continue;
    const info = await stat(path.join(root, file)).catch(() => undefined);
    if (!info || Date.now() - info.mtimeMs < FILE_GRACE_MS) continue;
    await removeFile(path.join(root, file));
    removed++;
  }
  return removed;
}

/** Files under the videos folder, relative to it: each account's folder, and loose files of older versions. */
async function listVideoFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (entry.isFile()) files.push(entry.name);
    else if (entry.isDirectory())
      for (const name of await readdir(path.join(root, entry.name)).catch(() => [] as string[]))
        files.push(`${entry.name}/${name}`);
  }
  return files;
}
