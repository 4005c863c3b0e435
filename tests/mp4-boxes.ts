/**
 * Hand-made ISO-BMFF files for the probe's hostile cases, too small to need fixtures: each is a
 * few boxes of a 32-bit size, a four-cc and a body.
 */

export function box(type: string, ...body: Buffer[]): Buffer {
  const payload = Buffer.concat(body);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + payload.length);
  header.write(type, 4, "latin1");
  return Buffer.concat([header, payload]);
}

export const ftyp = box("ftyp", Buffer.from("isom"), Buffer.from([0, 0, 2, 0]), Buffer.from("isomiso2avc1mp41"));

/** 48 bytes: a moov holding only a free box (mp4box threw a TypeError on it). */
export const moovWithoutMvhd = Buffer.concat([ftyp, box("moov", box("free"))]);

/** 148 bytes: a 5 s movie header and no track at all. */
export function moovWithoutTracks(): Buffer {
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(1000, 12); // timescale
  mvhd.writeUInt32BE(5000, 16); // duration
  return Buffer.concat([ftyp, box("moov", box("mvhd", mvhd))]);
}
