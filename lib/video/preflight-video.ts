import path from "node:path";
import type { Dispatcher } from "undici";
import { probeRemoteVideo } from "./probe-remote-video";
import { probeVideo, type VideoProbe } from "./probe-video";
import { VideoProbeError } from "./video-probe-error";
import { checkReelSpec } from "./reel-spec";
import { VideoFetchError } from "../net/guarded-fetch";

/**
 * The worker's check of a video before it asks the real Graph API for a container: the same probe
 * and the same reel specification as the sandbox, so a 1 s clip fails in a second with Graph's
 * code and a reason, instead of minutes later as an opaque ERROR. A video Dispatch cannot read
 * (its host refuses us, a timeout) is not refused: Graph fetches it itself, and the publication
 * carries a warning that it was not checked.
 */

export type PreflightSource = { url: string } | { file: string };

export interface PreflightResult {
  /** Spec violations: the publication fails at once (352 / 2207026). */
  problems: string[];
  warnings: string[];
  /** What was found, for the timeline. */
  summary: string;
}

export interface PreflightOptions {
  dispatcher: Dispatcher;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  dataDir: string;
}

export function createPreflight(
  options: PreflightOptions,
): (source: PreflightSource, signal: AbortSignal) => Promise<PreflightResult> {
  return async (source, signal) => {
    let probe: VideoProbe;
    try {
      probe =
        "file" in source
          ? await probeVideo(source.file)
          : (
              await probeRemoteVideo(source.url, {
                ...options,
                tmpDir: path.join(options.dataDir, "preflight"),
                signal,
              })
            ).probe;
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (error instanceof VideoProbeError)
        return {
          problems: [`the file is not a readable MP4 or MOV video (${error.message})`],
          warnings: [],
          summary: "the file is not a readable MP4 or MOV",
        };
      if (error instanceof VideoFetchError) {
        return {
          problems: [],
          warnings: [`Dispatch could not read the video to check it first (${error.message}); Graph fetches it itself`],
          summary: "the video could not be read",
        };
      }
      throw error;
    }
    const { problems, warnings } = checkReelSpec(probe);
    return { problems, warnings, summary: describeProbe(probe) };
  };
}

/** "H.264 720×1280 at 30 fps, 5 s, 148 KB, moov at the front, AAC 44.1 kHz stereo". */
export function describeProbe(probe: VideoProbe): string {
  const { video, audio } = probe;
  const parts = [
    video
      ? `${video.codecString} ${video.width}×${video.height}${video.fps ? ` at ${Math.round(video.fps * 100) / 100} fps` : ""}`
      : "no video track",
    `${Math.round(probe.durationSeconds * 100) / 100} s`,
    probe.sizeBytes >= 1024 * 1024
      ? `${Math.round(probe.sizeBytes / (1024 * 1024))} MB`
      : `${Math.round(probe.sizeBytes / 1024)} KB`,
    probe.moovBeforeMdat ? "moov at the front" : "moov at the end",
    audio
      ? `${audio.codecString} ${audio.sampleRate / 1000} kHz ${audio.channels === 1 ? "mono" : audio.channels === 2 ? "stereo" : `${audio.channels} channels`}`
      : "no audio",
  ];
  return parts.join(", ");
}
