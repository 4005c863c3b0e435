import { readdir, rename, stat } from "node:fs/promises";
import path from "node:path";
import { limitsOf, type SandboxDeps } from "./deps";
import { formatBytes } from "../../net/fetch-video";
import { videosDir } from "./store";

/**
 * The kept videos on disk: one folder per account under DATA_DIR/sandbox/videos, bounded per
 * account and in total, and the cap on downloads running at once. Files of expired or failed
 * containers are removed by the sweep (resume-processing.ts); a reel's records expire after
 * mediaTtlMs, and its file goes with the next sweep.
 */

const KEPT = /\.(mp4|mov)$/;

/** Where an account's downloads and kept videos live; `file` fields are relative to videosDir. */
export function accountVideoPath(accountId: string, name: string): string {
  return `${accountId}/${name}`;
}

/** Bytes of kept videos in `dir` and its account folders. */
async function keptBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await keptBytes(full);
    else if (KEPT.test(entry.name)) total += (await stat(full).catch(() => undefined))?.size ?? 0;
  }
  return total;
}

const keeping = new WeakMap<SandboxDeps, Promise<unknown>>();

/**
 * Moves a checked download to its kept name if the account and the store have room for it.
 * One at a time per process, so two videos cannot both take the last room.
 */
export async function keepVideo(
  deps: SandboxDeps,
  accountId: string,
  part: string,
  file: string,
): Promise<{ kept: true } | { kept: false; reason: string }> {
  const previous = keeping.get(deps) ?? Promise.resolve();
  // Keeps run one after another whatever became of the one before: its own caller saw its failure.
  const attempt = previous.catch(() => {}).then(() => keepNow(deps, accountId, part, file));
  keeping.set(deps, attempt);
  return attempt;
}

async function keepNow(
  deps: SandboxDeps,
  accountId: string,
  part: string,
  file: string,
): Promise<{ kept: true } | { kept: false; reason: string }> {
  const limits = limitsOf(deps);
  const root = videosDir(deps);
  const size = (await stat(part)).size;
  const account = await keptBytes(path.join(root, accountId));
  if (account + size > limits.maxAccountBytes) {
    return {
      kept: false,
      reason: `the account's kept videos would exceed the sandbox's ${formatBytes(limits.maxAccountBytes)} per account; published reels are kept ${Math.round(limits.mediaTtlMs / 86_400_000)} days`,
    };
  }
  if ((await keptBytes(root)) + size > limits.maxStoreBytes) {
    return {
      kept: false,
      reason: `the sandbox's video store is full (${formatBytes(limits.maxStoreBytes)}); try again later`,
    };
  }
  await rename(part, path.join(root, file));
  return { kept: true };
}

/** A counting semaphore: at most `limit` holders; the others wait in order, or give up on abort. */
class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal?.removeEventListener("abort", abort);
          resolve();
        };
        const abort = () => {
          this.waiting.splice(this.waiting.indexOf(turn), 1);
          reject(signal?.reason);
        };
        if (signal?.aborted) return reject(signal.reason);
        signal?.addEventListener("abort", abort, { once: true });
        this.waiting.push(turn);
      });
    } else {
      this.active++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes on without being freed
      else this.active--;
    };
  }
}

const slots = new WeakMap<SandboxDeps, Slots>();

/** The process's download slots (one SandboxDeps per web process: a global cap). */
export function downloadSlots(deps: SandboxDeps): Slots {
  let found = slots.get(deps);
  if (!found) slots.set(deps, (found = new Slots(limitsOf(deps).maxConcurrentDownloads)));
  return found;
}
