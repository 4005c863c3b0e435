import { open } from "node:fs/promises";
import type { Movie, Track } from "mp4box";
import { parseMovie, readMajorBrand, scanTopLevelBoxes, type ReadAt } from "./read-mp4-boxes";
import { VideoProbeError } from "./video-probe-error";

/**
 * Reads the facts the reel specification cares about from an MP4/MOV file, without decoding it:
 * a scan of the top-level boxes (layout, moov position) and mp4box for the moov (tracks, codecs),
 * both in read-mp4-boxes.ts; this module reads what they found as the reel specification's facts.
 * Only the box headers and the moov are read, so a 300 MB file costs a few reads.
 */

export interface VideoProbe {
  container: "mp4" | "mov";
  majorBrand: string | null;
  compatibleBrands: string[];
  mimeType: "video/mp4" | "video/quicktime";
  /** The movie's bytes: up to the end of its last top-level box. */
  sizeBytes: number;
  /** Bytes after the last top-level box (garbage a player never reads); the sandbox does not keep them. */
  trailingBytes: number;
  durationSeconds: number;
  /** Overall bits per second (file size over duration). */
  bitrate: number;
  /** The moov box comes before the media data ("faststart"): players start before the download ends. */
  moovBeforeMdat: boolean;
  fragmented: boolean;
  /**
   * Edit lists: "shift" is one entry that only skips a start offset (ffmpeg writes that for B-frame
   * and AAC priming delay); "complex" is anything else (gaps, cuts, rate changes).
   */
  editLists: "none" | "shift" | "complex";
  video: VideoTrackFacts | null;
  audio: AudioTrackFacts | null;
}

export interface VideoTrackFacts {
  /** Sample entry four-cc: avc1/avc3 (H.264), hvc1/hev1 (HEVC), mp4v, vp09, av01, ... */
  codec: string;
  /** RFC 6381 string, e.g. avc1.4d401e. */
  codecString: string;
  width: number;
  height: number;
  /** Average frames per second; null when the moov has no sample table (fragmented files). */
  fps: number | null;
  frames: number;
  bitrate: number;
  durationSeconds: number;
}

export interface AudioTrackFacts {
  /** Sample entry four-cc: mp4a for AAC (and MP3-in-MP4, see codecString), Opus, ac-3, ... */
  codec: string;
  codecString: string;
  sampleRate: number;
  channels: number;
  bitrate: number;
}

/** Probes a file path or the bytes of a whole file. Throws VideoProbeError when it is not a readable MP4/MOV. */
export async function probeVideo(source: string | Uint8Array): Promise<VideoProbe> {
  if (typeof source !== "string") {
    const bytes = source;
    return probeVideoAt(bytes.byteLength, async (position, length) =>
      bytes.subarray(position, Math.min(position + length, bytes.byteLength)),
    );
  }
  const handle = await open(source, "r");
  try {
    const { size } = await handle.stat();
    return await probeVideoAt(size, async (position, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - position)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      return buffer.subarray(0, bytesRead);
    });
  } finally {
    await handle.close();
  }
}

/** Probes a file of `size` bytes through `readAt` (a local file, or HTTP range requests: see probe-remote-video.ts). */
export async function probeVideoAt(size: number, readAt: ReadAt): Promise<VideoProbe> {
  const boxes = await scanTopLevelBoxes(size, readAt);
  const last = boxes[boxes.length - 1];
  const movieBytes = last ? Math.min(size, last.start + last.size) : size;
  const types = boxes.map((b) => b.type);
  const moovIndex = types.indexOf("moov");
  if (moovIndex < 0) throw new VideoProbeError("the file has no moov box (incomplete upload, or not an MP4/MOV file)");
  const mdatIndex = types.indexOf("mdat");

  const movie = await parseMovie(movieBytes, readAt);
  const majorBrand = await readMajorBrand(boxes, readAt);
  const compatibleBrands = [...new Set(movie.brands.filter((b) => b !== majorBrand))];
  const isMov = majorBrand === "qt  " || (majorBrand === null && types.includes("wide"));

  const durationSeconds = movieDurationSeconds(movie);
  const videoTrack = movie.videoTracks[0];
  const audioTrack = movie.audioTracks[0];
  return {
    container: isMov ? "mov" : "mp4",
    majorBrand,
    compatibleBrands,
    mimeType: isMov ? "video/quicktime" : "video/mp4",
    sizeBytes: movieBytes,
    trailingBytes: size - movieBytes,
    durationSeconds,
    bitrate: durationSeconds > 0 ? Math.round((movieBytes * 8) / durationSeconds) : 0,
    moovBeforeMdat: mdatIndex < 0 || moovIndex < mdatIndex,
    fragmented: movie.isFragmented || types.includes("moof"),
    editLists: editListKind(movie.tracks),
    video: videoTrack ? videoFacts(videoTrack) : null,
    audio: audioTrack ? audioFacts(audioTrack) : null,
  };
}

function editListKind(tracks: Track[]): VideoProbe["editLists"] {
  const edits = tracks.map((t) => t.edits ?? []).filter((e) => e.length > 0);
  if (edits.length === 0) return "none";
  const shiftOnly = edits.every(
    (e) => e.length === 1 && (e[0]?.media_time ?? -1) >= 0 && e[0]?.media_rate_integer === 1,
  );
  return shiftOnly ? "shift" : "complex";
}

function movieDurationSeconds(movie: Movie): number {
  if (movie.duration > 0 && movie.timescale > 0) return movie.duration / movie.timescale;
  if (movie.fragment_duration && movie.fragment_duration.den > 0)
    return movie.fragment_duration.num / movie.fragment_duration.den;
  const tracks = movie.tracks.filter((t) => t.timescale > 0);
  return Math.max(0, ...tracks.map((t) => t.samples_duration / t.timescale));
}

function videoFacts(track: Track): VideoTrackFacts {
  const seconds = track.timescale > 0 ? track.samples_duration / track.timescale : 0;
  return {
    codec: track.codec.split(".")[0] ?? track.codec,
    codecString: track.codec,
    width: track.video?.width ?? track.track_width,
    height: track.video?.height ?? track.track_height,
    fps: track.nb_samples > 0 && seconds > 0 ? round(track.nb_samples / seconds, 3) : null,
    frames: track.nb_samples,
    bitrate: Math.round(track.bitrate),
    durationSeconds: seconds,
  };
}

function audioFacts(track: Track): AudioTrackFacts {
  return {
    codec: track.codec.split(".")[0] ?? track.codec,
    codecString: track.codec,
    sampleRate: track.audio?.sample_rate ?? 0,
    channels: track.audio?.channel_count ?? 0,
    bitrate: Math.round(track.bitrate),
  };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
