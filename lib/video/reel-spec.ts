import type { VideoProbe } from "./probe-video";

/**
 * The reel video specification (graph-reference.md), declared once: the sandbox checks the videos
 * it processes against it, and the worker's preflight checks a video before a container is made
 * against the real Graph API. Types only from the probe, so anything may import it.
 */

/** Graph's answer for a video that breaks the specification: 352 / 2207026, "unsupported video format". */
export const REEL_SPEC_VIOLATION = { code: 352, subcode: 2207026, meaning: "unsupported video format" } as const;

export const REEL_SPEC = {
  minDurationSeconds: 3,
  maxDurationSeconds: 15 * 60,
  maxWidth: 1920,
  minFps: 23,
  maxFps: 60,
  minAspect: 0.01,
  maxAspect: 10,
  maxVideoBitrate: 25_000_000,
  maxAudioSampleRate: 48_000,
} as const;

const H264 = new Set(["avc1", "avc3"]);
const HEVC = new Set(["hvc1", "hev1"]);
/** mp4a object types that are AAC: 0x40 (MPEG-4 audio), 0x66-0x68 (MPEG-2 AAC profiles). mp4a.6B is MP3. */
const AAC = /^mp4a\.(40|66|67|68)(\.|$)/i;
/** H.264 profiles that carry 4:2:2 or 4:4:4 chroma, which reels refuse (4:2:0 only). */
const NON_420_H264_PROFILES = new Set([0x7a, 0xf4, 0x2c]);

export interface ReelSpecCheck {
  /** Reasons the video is refused (Graph: 352 / 2207026). */
  problems: string[];
  /** Deviations from Meta's recommendations that it still accepts. */
  warnings: string[];
}

/** Checks a probe against the reel specification; each problem is a sentence a user can act on. */
export function checkReelSpec(probe: VideoProbe): ReelSpecCheck {
  const problems: string[] = [];
  const warnings: string[] = [];
  const { video, audio } = probe;
  const duration = round(probe.durationSeconds, 2);
  if (probe.durationSeconds < REEL_SPEC.minDurationSeconds || probe.durationSeconds > REEL_SPEC.maxDurationSeconds) {
    problems.push(`the video is ${duration} s long; reels must be 3 s to 15 min`);
  }
  if (!video) {
    problems.push("the file has no video track");
  } else {
    if (!H264.has(video.codec) && !HEVC.has(video.codec)) {
      problems.push(`the video codec is ${video.codecString}; reels need H.264 (avc1) or HEVC (hvc1/hev1)`);
    } else if (H264.has(video.codec)) {
      const profile = Number.parseInt(video.codecString.split(".")[1]?.slice(0, 2) ?? "", 16);
      if (NON_420_H264_PROFILES.has(profile))
        problems.push(`the H.264 profile (${video.codecString}) is not 4:2:0; reels need 4:2:0 chroma`);
    }
    if (video.width > REEL_SPEC.maxWidth)
      problems.push(`the video is ${video.width} px wide; reels allow at most ${REEL_SPEC.maxWidth} px`);
    const aspect = video.height > 0 ? video.width / video.height : 0;
    if (aspect < REEL_SPEC.minAspect || aspect > REEL_SPEC.maxAspect) {
      problems.push(`the aspect ratio ${video.width}:${video.height} is outside 0.01:1 to 10:1`);
    } else if (Math.abs(aspect - 9 / 16) > 0.01) {
      warnings.push(`the aspect ratio ${video.width}:${video.height} is not the recommended 9:16`);
    }
    if (video.fps === null) {
      problems.push("the frame rate cannot be read (fragmented MP4 without a sample table)");
    } else if (video.fps < REEL_SPEC.minFps || video.fps > REEL_SPEC.maxFps) {
      problems.push(`the frame rate is ${round(video.fps, 2)} fps; reels need 23 to 60 fps`);
    }
    if (video.bitrate > REEL_SPEC.maxVideoBitrate)
      warnings.push(`the video bitrate is ${Math.round(video.bitrate / 1e6)} Mbps; Meta recommends at most 25 Mbps`);
  }
  if (audio) {
    if (!AAC.test(audio.codecString))
      problems.push(`the audio codec is ${audio.codecString}; reels need AAC audio (or no audio)`);
    if (audio.sampleRate > REEL_SPEC.maxAudioSampleRate)
      warnings.push(`the audio sample rate is ${audio.sampleRate} Hz; Meta recommends at most 48 kHz`);
    if (audio.channels > 2) warnings.push(`the audio has ${audio.channels} channels; Meta recommends mono or stereo`);
  }
  if (!probe.moovBeforeMdat)
    warnings.push(
      "the moov atom is after the media data; Meta recommends it at the front (ffmpeg -movflags +faststart)",
    );
  if (probe.editLists === "complex")
    warnings.push("the file has edit lists that cut or delay tracks; Meta recommends none");
  return { problems, warnings };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
