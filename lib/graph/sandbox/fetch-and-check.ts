import { copyFile, link, truncate } from "node:fs/promises";
import path from "node:path";
import type { Dispatcher } from "undici";
import { downloadVideo } from "../../net/fetch-video";
import { VideoFetchError } from "../../net/guarded-fetch";
import { createPublicAgent } from "../../net/public-agent";
import { removeFile } from "../../remove-file";
import { probeVideo, type VideoProbe } from "../../video/probe-video";
import { checkReelSpec, REEL_SPEC_VIOLATION } from "../../video/reel-spec";
import { VideoProbeError } from "../../video/video-probe-error";
import { limitsOf, type SandboxDeps } from "./deps";
import { videoPath, type ContainerRecord } from "./store";
import { accountVideoPath, downloadSlots, keepVideo } from "./video-store";

/**
 * A container's video fetched and checked: downloaded through the sandbox's connection policy (or
 * taken from its resumable upload), probed, held to the reel specification and kept; the answer is
 * the fields that settle the container FINISHED or ERROR (process-container.ts writes them).
 */

export const FINISHED_STATUS = "Finished: Media has been uploaded and it is ready to be published.";

export interface Outcome {
  fields: Record<string, string | number | undefined>;
  /** The kept video when the container is FINISHED. */
  file?: string;
}

const fetchers = new WeakMap<SandboxDeps, Dispatcher>();

/**
 * The sandbox's connection policy: public addresses only, except this server's own origin (this
 * machine at PORT: the committed samples under /samples, by whatever host name the dashboard was
 * opened with), unless the operator set ALLOW_PRIVATE_URLS.
 */
export function fetcherOf(deps: SandboxDeps): Dispatcher {
  if (deps.dispatcher) return deps.dispatcher;
  let agent = fetchers.get(deps);
  if (!agent) {
    agent = createPublicAgent({
      allowPrivate: deps.config.ALLOW_PRIVATE_URLS,
      ownPort: deps.config.PORT,
      lookup: deps.lookup,
    });
    fetchers.set(deps, agent);
  }
  return agent;
}

export async function fetchAndCheck(
  deps: SandboxDeps,
  container: ContainerRecord,
  part: string,
  signal: AbortSignal,
): Promise<Outcome> {
  const uploaded = container.upload_file ? videoPath(deps, container.upload_file) : undefined;
  const release = uploaded ? () => {} : await downloadSlots(deps).acquire(signal);
  let probe: VideoProbe;
  try {
    await bringVideo(deps, container, uploaded, part, signal);
    probe = await probeVideo(part);
  } catch (error) {
    await removeFile(part);
    if (error instanceof VideoFetchError) {
      return error.timedOut
        ? { fields: errorFields(-2, 2207003, `timed out downloading the media: ${error.message}`) }
        : { fields: errorFields(9004, 2207052, `the video could not be downloaded: ${error.message}`) };
    }
    if (error instanceof VideoProbeError) return { fields: specViolation(error.message) };
    throw error;
  } finally {
    release();
  }

  const { problems, warnings } = checkReelSpec(probe);
  if (problems.length > 0) {
    await removeFile(part);
    return { fields: specViolation(problems.join("; ")) };
  }
  const offsetProblem = thumbOffsetProblem(container, probe);
  if (offsetProblem) {
    await removeFile(part);
    return { fields: offsetProblem };
  }
  // Bytes after the last box are never played: keep the movie only.
  if (probe.trailingBytes > 0) await truncate(part, probe.sizeBytes);
  const file = accountVideoPath(container.account_id, `${path.basename(part, ".part")}.${probe.container}`);
  const kept = await keepVideo(deps, container.account_id, part, file);
  if (!kept.kept) {
    await removeFile(part);
    return { fields: errorFields(-1, 2207053, kept.reason) };
  }
  if (uploaded) await removeFile(uploaded);
  return {
    file,
    fields: {
      status_code: "FINISHED",
      status: FINISHED_STATUS,
      file,
      mime: probe.mimeType,
      probe: JSON.stringify({ ...probe, warnings }),
    },
  };
}

/** Puts the container's video at `part`: its resumable upload's bytes, or a download of its video_url. */
async function bringVideo(
  deps: SandboxDeps,
  container: ContainerRecord,
  uploaded: string | undefined,
  part: string,
  signal: AbortSignal,
): Promise<void> {
  const limits = limitsOf(deps);
  if (uploaded) {
    // The bytes of a resumable upload are processed exactly as downloaded ones; a link keeps them for another attempt.
    await link(uploaded, part).catch(() => copyFile(uploaded, part));
  } else {
    await downloadVideo(container.video_url, part, {
      dispatcher: fetcherOf(deps),
      maxBytes: limits.maxVideoBytes,
      timeoutMs: limits.fetchTimeoutMs,
      maxRedirects: limits.maxRedirects,
      signal,
    });
  }
}

/** Graph ignores thumb_offset when there is a cover_url; otherwise the frame must be inside the video (1 / 2207057). */
function thumbOffsetProblem(container: ContainerRecord, probe: VideoProbe): Outcome["fields"] | undefined {
  if (!container.thumb_offset || container.cover_url) return undefined;
  const lengthMs = Math.floor(probe.durationSeconds * 1000);
  if (Number(container.thumb_offset) < lengthMs) return undefined;
  return errorFields(
    1,
    2207057,
    `Thumbnail offset must be greater than or equal to 0 and less than video duration, i.e. ${lengthMs}`,
  );
}

function specViolation(reason: string): Outcome["fields"] {
  return errorFields(
    REEL_SPEC_VIOLATION.code,
    REEL_SPEC_VIOLATION.subcode,
    `${REEL_SPEC_VIOLATION.meaning}: ${reason}`,
  );
}

/** The code is kept for the sandbox's own use; the status text says the subcode as Meta's does (errorStatus). */
export function errorFields(code: number, subcode: number, reason: string): Outcome["fields"] {
  return { status_code: "ERROR", status: errorStatus(subcode, reason), error_code: code, error_subcode: subcode };
}

/**
 * An ERROR container's `status`, in Meta's words ("Error: Media upload has failed with error code
 * 2207082", graph-reference.md; clients parse "error code N"). Whether Meta ever says why is not
 * documented; the sandbox adds its reason in parentheses after the code, so a rehearsal shows it.
 */
export function errorStatus(subcode: number, reason: string): string {
  return `Error: Media upload has failed with error code ${subcode} (${reason})`;
}
