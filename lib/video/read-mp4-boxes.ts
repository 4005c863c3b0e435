import { createFile, MP4BoxBuffer, type Movie } from "mp4box";
import { VideoProbeError } from "./video-probe-error";

/** The probe's reading of an MP4/MOV file: its top-level box headers, its major brand, and the moov through mp4box. */

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

/** Walks the top-level box headers; a file whose first bytes are not a box header is not ISO-BMFF. */
export async function scanTopLevelBoxes(size: number, readAt: ReadAt): Promise<TopLevelBox[]> {
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

export async function readMajorBrand(boxes: TopLevelBox[], readAt: ReadAt): Promise<string | null> {
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
export async function parseMovie(size: number, readAt: ReadAt): Promise<Movie> {
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
