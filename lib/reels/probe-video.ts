import { open } from "node:fs/promises";
import { createFile, MP4BoxBuffer, type Movie, type Track } from "mp4box";
import { brandedError } from "../brand";

/**
 * Reads the facts the reel specification cares about from an MP4/MOV file, without decoding it:
 * a scan of the top-level boxes (layout, moov position) and mp4box for the moov (tracks, codecs).
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

export class VideoProbeError extends brandedError("dispatch.video-probe-error") {
  constructor(message: string) {
    super(message);
    this.name = "VideoProbeError";
  }
}

export type ReadAt = (position: number, length: number) => Promise<Uint8Array>;

interface TopLevelBox {
  type: string;
  start: number;
  size: number;
}

const CHUNK = 1024 * 1024;
/**
 * mp4box holds a box in memory until it has all of it, so every top-level box it parses (all but
 * mdat, whose payload it skips) is capped: a real reel's moov is a few MB, and a file that declares
 * a larger one is refused before a byte of it is read.
 */
export const MAX_PARSED_BOX_BYTES = 16 * 1024 * 1024;
const KNOWN_TOP_LEVEL = new Set([
  "ftyp",
  "moov",
  "mdat",
  "free",
  "skip",
  "wide",
  "pnot",
  "uuid",
  "moof",
  "mfra",
  "sidx",
  "styp",
  "meta",
  "pdin",
  "junk",
  "PICT",
]);

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

/** Walks the top-level box headers; a file whose first bytes are not a box header is not ISO-BMFF. */
async function scanTopLevelBoxes(size: number, readAt: ReadAt): Promise<TopLevelBox[]> {
  const boxes: TopLevelBox[] = [];
  let position = 0;
  while (position + 8 <= size && boxes.length < 10_000) {
    const header = await readAt(position, 16);
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    let boxSize = view.getUint32(0);
    const type = String.fromCharCode(...header.subarray(4, 8));
    if (!/^[\x20-\x7e]{4}$/.test(type) || (boxes.length === 0 && !KNOWN_TOP_LEVEL.has(type))) {
      if (boxes.length === 0) throw new VideoProbeError("not an MP4 or MOV file");
      break; // trailing garbage after valid boxes: players ignore it, so do we
    }
    if (boxSize === 1) {
      if (header.byteLength < 16) break;
      boxSize = Number(view.getBigUint64(8));
    } else if (boxSize === 0) {
      boxSize = size - position;
    }
    if (boxSize < 8) throw new VideoProbeError(`corrupt ${type} box at byte ${position}`);
    if (type !== "mdat" && boxSize > MAX_PARSED_BOX_BYTES) {
      throw new VideoProbeError(
        `its ${type} box is ${Math.ceil(boxSize / 1024 / 1024)} MB; at most ${MAX_PARSED_BOX_BYTES / 1024 / 1024} MB is read`,
      );
    }
    boxes.push({ type, start: position, size: boxSize });
    position += boxSize;
  }
  if (boxes.length === 0) throw new VideoProbeError("not an MP4 or MOV file");
  return boxes;
}

async function readMajorBrand(boxes: TopLevelBox[], readAt: ReadAt): Promise<string | null> {
  const ftyp = boxes.find((b) => b.type === "ftyp");
  if (!ftyp || ftyp.size < 12) return null;
  const bytes = await readAt(ftyp.start + 8, 4);
  return String.fromCharCode(...bytes);
}

/**
 * Feeds mp4box the bytes it asks for, up to the end of the last top-level box; it skips over mdat
 * on its own, so only headers and the moov are read. mp4box throws plain TypeErrors on some
 * malformed boxes (a moov without mvhd): those are a file it cannot read, like its onError.
 */
async function parseMovie(size: number, readAt: ReadAt): Promise<Movie> {
  const file = createFile(false);
  let movie: Movie | undefined;
  let failure: string | undefined;
  file.onReady = (info) => {
    movie = info;
  };
  file.onError = (_module, message) => {
    failure = message;
  };
  let position = 0;
  for (let reads = 0; !movie && !failure && position < size && reads < 10_000; reads++) {
    const bytes = await readAt(position, Math.min(CHUNK, size - position));
    if (bytes.byteLength === 0) break;
    const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const next = parseStep(() =>
      file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, position), position + bytes.byteLength >= size),
    );
    position = next > position ? next : position + bytes.byteLength;
  }
  parseStep(() => file.flush());
  if (!movie)
    throw new VideoProbeError(
      failure ? `the MP4/MOV structure is invalid: ${failure}` : "the moov box could not be parsed",
    );
  return movie;
}

function parseStep<T>(step: () => T): T {
  try {
    return step();
  } catch {
    // Its message names mp4box's internals, not the file: the user needs to know only this.
    throw new VideoProbeError("the MP4/MOV structure is invalid: a required box is missing or malformed");
  }
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
