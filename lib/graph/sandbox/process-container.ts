import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { limitsOf, type SandboxDeps } from "./deps";
import { awaitingUpload, readContainerRecord, videoPath, visibleStatusCode, type ContainerRecord } from "./store";
import { beat, claimStaleContainer, finishProcessing } from "./container-writes";
import { errorFields, errorStatus, fetchAndCheck, type Outcome } from "./fetch-and-check";
import { accountVideoPath } from "./video-store";
import { removeFile } from "../../remove-file";

/**
 * Processing a container: download the video, probe it, check the reel specification, and settle
 * the container FINISHED or ERROR, never sooner than its processing time (SANDBOX_PROCESSING_MS,
 * or the container's own, set through the control surface). Fetching and checking the video: fetch-and-check.ts.
 *
 * Each attempt has an owner id and beats a heartbeat into the container. An attempt whose process
 * died stops beating; the next request that reads the container, or the next start-up, takes it
 * over. Only the owner may settle the container, so a slow old attempt cannot overwrite a new one.
 */

export const IN_PROGRESS_STATUS = "In Progress: Media is still being processed.";
const GAVE_UP_STATUS = errorStatus(2207001, "processing was interrupted too many times");

const running = new WeakMap<SandboxDeps, Set<Promise<void>>>();

export function newAttemptOwner(): string {
  return randomBytes(6).toString("hex");
}

/** Runs processContainer in the background; settleSandboxProcessing waits for it. */
export function startProcessing(deps: SandboxDeps, containerId: string, owner: string): void {
  const tasks = running.get(deps) ?? new Set<Promise<void>>();
  running.set(deps, tasks);
  const task = processContainer(deps, containerId, owner).catch((error: unknown) => {
    deps.log("error", "sandbox processing failed", { container_id: containerId, error });
  });
  tasks.add(task);
  void task.finally(() => tasks.delete(task));
}

/** Waits until the background processing started with these deps has settled (tests, shutdown). */
export async function settleSandboxProcessing(deps: SandboxDeps): Promise<void> {
  const tasks = running.get(deps);
  while (tasks && tasks.size > 0) await Promise.allSettled([...tasks]);
}

/**
 * Takes over an IN_PROGRESS container whose processor stopped beating, and answers the record a
 * reader should see. Cheap when there is nothing to do: a Redis call only for stale containers.
 */
export async function resumeIfStale(
  deps: SandboxDeps,
  container: ContainerRecord,
): Promise<{ container: ContainerRecord; resumed: boolean }> {
  const now = deps.now();
  const limits = limitsOf(deps);
  if (visibleStatusCode(container, now) !== "IN_PROGRESS" || container.heartbeat_at > now - limits.staleAfterMs)
    return { container, resumed: false };
  // A resumable container has nothing to process until its bytes (or a file_url) arrive.
  if (awaitingUpload(container)) return { container, resumed: false };
  const owner = newAttemptOwner();
  const claim = await claimStaleContainer(deps.redis, container.id, {
    now,
    owner,
    staleAfterMs: limits.staleAfterMs,
    maxAttempts: limits.maxAttempts,
    gaveUpStatus: GAVE_UP_STATUS,
  });
  if (claim === "claimed") {
    deps.log("warn", "sandbox container resumed after its processor stopped", {
      container_id: container.id,
      attempt: container.attempts + 1,
    });
    startProcessing(deps, container.id, owner);
  }
  const current = (await readContainerRecord(deps.redis, container.id)) ?? container;
  return { container: current, resumed: claim === "claimed" };
}

export async function processContainer(deps: SandboxDeps, containerId: string, owner: string): Promise<void> {
  const container = await readContainerRecord(deps.redis, containerId);
  if (!container || container.owner !== owner || container.status_code !== "IN_PROGRESS") return;
  const limits = limitsOf(deps);
  const started = performance.now();
  const lost = new AbortController();
  const heartbeat = setInterval(() => {
    beat(deps.redis, containerId, owner, deps.now()).then(
      (owned) => owned || lost.abort(new Error("another attempt owns the container")),
      () => {}, // Redis away: keep working; if it stays away, another attempt takes over later
    );
  }, limits.heartbeatMs);
  heartbeat.unref();

  const part = videoPath(deps, accountVideoPath(container.account_id, `${containerId}-${owner}.part`));
  let outcome: Outcome | undefined;
  try {
    await mkdir(path.dirname(part), { recursive: true });
    outcome = await fetchAndCheck(deps, container, part, lost.signal);
    await waitProcessingTime(deps, containerId, started, lost.signal);
  } catch (error) {
    clearInterval(heartbeat);
    await removeFile(part);
    if (outcome?.file) await removeFile(videoPath(deps, outcome.file));
    if (lost.signal.aborted) return; // the new owner settles it
    deps.log("error", "sandbox processing error", { container_id: containerId, error });
    outcome = { fields: errorFields(-1, 2207001, "unexpected server error while processing the media") };
  }
  clearInterval(heartbeat);

  const saved = await finishProcessing(deps.redis, containerId, owner, {
    ...outcome.fields,
    owner: "",
    settled_at: deps.now(),
  });
  if (!saved && outcome.file) await removeFile(videoPath(deps, outcome.file));
  if (saved) {
    deps.log("info", "sandbox container processed", {
      container_id: containerId,
      account_id: container.account_id,
      status_code: outcome.fields.status_code,
      error_subcode: outcome.fields.error_subcode,
      ms: Math.round(performance.now() - started),
    });
  }
}

/**
 * Never settles sooner than the container's processing time: its own (set through the control
 * surface, even while it processes) or SANDBOX_PROCESSING_MS. Read again each second, so a
 * rehearsal can make a running container slow (or quick) without restarting anything.
 */
async function waitProcessingTime(
  deps: SandboxDeps,
  containerId: string,
  started: number,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    const own = (await readContainerRecord(deps.redis, containerId))?.processing_ms;
    const remaining = (own ?? deps.config.SANDBOX_PROCESSING_MS) - (performance.now() - started);
    if (remaining <= 0) return;
    await sleep(Math.min(remaining, 1000), undefined, { signal });
  }
}
