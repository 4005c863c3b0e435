import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeVideo, probeVideoAt, type VideoProbe } from "@/lib/video/probe-video";
import { MAX_PARSED_BOX_BYTES } from "@/lib/video/read-mp4-boxes";
import { VideoProbeError } from "@/lib/video/video-probe-error";
import { checkReelSpec } from "@/lib/video/reel-spec";
import { ftyp, moovWithoutMvhd, moovWithoutTracks } from "../mp4-boxes";

const sample = (name: string) => path.resolve(__dirname, "../../public/samples", name);

describe("probeVideo on the committed samples", () => {
  it("reads the valid reel: 360x640 H.264 Main + AAC-LC stereo 44.1 kHz, 4 s, 30 fps, faststart", async () => {
    const probe = await probeVideo(sample("reel-valid.mp4"));
    expect(probe).toMatchObject({
      container: "mp4",
      majorBrand: "isom",
      mimeType: "video/mp4",
      durationSeconds: 4,
      moovBeforeMdat: true,
      fragmented: false,
      editLists: "shift", // ffmpeg's B-frame / AAC priming offset
      video: { codec: "avc1", codecString: "avc1.4d401e", width: 360, height: 640, fps: 30, frames: 120 },
      audio: { codec: "mp4a", codecString: "mp4a.40.2", sampleRate: 44100, channels: 2 },
    });
    expect(probe.sizeBytes).toBeLessThan(300 * 1024);
    expect(probe.bitrate).toBe(Math.round((probe.sizeBytes * 8) / 4));
    expect(checkReelSpec(probe).problems).toEqual([]);
  });

  it("reads the same facts from bytes as from a path", async () => {
    const fromPath = await probeVideo(sample("reel-valid.mp4"));
    const fromBytes = await probeVideo(await readFile(sample("reel-valid.mp4")));
    expect(fromBytes).toEqual(fromPath);
  });

  it("reads the short reel: 1.5 s, refused for its duration only", async () => {
    const probe = await probeVideo(sample("reel-too-short.mp4"));
    expect(probe).toMatchObject({
      durationSeconds: 1.5,
      video: { codec: "avc1", width: 360, height: 640, fps: 30, frames: 45 },
    });
    expect(checkReelSpec(probe).problems).toEqual(["the video is 1.5 s long; reels must be 3 s to 15 min"]);
  });

  it("reads the unsupported reel: MPEG-4 Part 2 video, no audio, refused for its codec only", async () => {
    const probe = await probeVideo(sample("reel-unsupported.mp4"));
    expect(probe).toMatchObject({
      durationSeconds: 4,
      audio: null,
      video: { codec: "mp4v", width: 360, height: 640, fps: 30 },
    });
    expect(checkReelSpec(probe).problems).toEqual([
      "the video codec is mp4v; reels need H.264 (avc1) or HEVC (hvc1/hev1)",
    ]);
  });

  it.each([
    ["text", Buffer.from("this is not a video at all, just some text")],
    ["a WebM header", Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81])],
    ["nothing", Buffer.alloc(0)],
  ])("refuses %s as not an MP4 or MOV file", async (_name, bytes) => {
    await expect(probeVideo(bytes)).rejects.toThrow(new VideoProbeError("not an MP4 or MOV file"));
  });

  it("refuses a file cut before its moov", async () => {
    const bytes = await readFile(sample("reel-valid.mp4"));
    await expect(probeVideo(bytes.subarray(0, 2000))).rejects.toBeInstanceOf(VideoProbeError);
  });
});

describe("probeVideo on malformed and hostile files", () => {
  it("refuses a moov holding only a free box as invalid, not with mp4box's TypeError", async () => {
    await expect(probeVideo(moovWithoutMvhd)).rejects.toThrow(
      new VideoProbeError("the MP4/MOV structure is invalid: a required box is missing or malformed"),
    );
  });

  it("reads a moov with only an mvhd as a movie without a video track", async () => {
    const probe = await probeVideo(moovWithoutTracks());
    expect(probe).toMatchObject({ video: null, audio: null, durationSeconds: 5 });
    expect(checkReelSpec(probe).problems).toEqual(["the file has no video track"]);
  });

  it("refuses a file declaring a moov over the cap before reading any of it", async () => {
    const moovBytes = 250 * 1024 * 1024;
    const head = Buffer.concat([
      ftyp,
      Buffer.from([moovBytes >>> 24, (moovBytes >>> 16) & 0xff, (moovBytes >>> 8) & 0xff, moovBytes & 0xff]),
      Buffer.from("moov"),
    ]);
    let bytesRead = 0;
    const readAt = async (position: number, length: number) => {
      const bytes = new Uint8Array(Math.max(0, Math.min(length, 16)));
      bytes.set(head.subarray(position, position + bytes.length));
      bytesRead += bytes.length;
      return bytes;
    };
    await expect(probeVideoAt(ftyp.length + moovBytes, readAt)).rejects.toThrow(
      new VideoProbeError(`its moov box is 250 MB; at most ${MAX_PARSED_BOX_BYTES / 1024 / 1024} MB is read`),
    );
    expect(bytesRead).toBeLessThanOrEqual(64);
  });
});

describe("probeVideo and bytes after the last box", () => {
  it("measures the movie up to its last box and counts what follows as trailing bytes", async () => {
    const original = await readFile(sample("reel-valid.mp4"));
    const padded = Buffer.concat([original, Buffer.alloc(8 * 1024 * 1024)]);
    const probe = await probeVideo(padded);
    expect(probe.sizeBytes).toBe(original.byteLength);
    expect(probe.trailingBytes).toBe(8 * 1024 * 1024);
    expect(probe.bitrate).toBe(Math.round((original.byteLength * 8) / 4));
    expect((await probeVideo(original)).trailingBytes).toBe(0);
  });
});

describe("checkReelSpec", () => {
  const valid: VideoProbe = {
    container: "mp4",
    majorBrand: "isom",
    compatibleBrands: [],
    mimeType: "video/mp4",
    sizeBytes: 1_000_000,
    trailingBytes: 0,
    durationSeconds: 10,
    bitrate: 800_000,
    moovBeforeMdat: true,
    fragmented: false,
    editLists: "none",
    video: {
      codec: "avc1",
      codecString: "avc1.640028",
      width: 1080,
      height: 1920,
      fps: 30,
      frames: 300,
      bitrate: 700_000,
      durationSeconds: 10,
    },
    audio: { codec: "mp4a", codecString: "mp4a.40.2", sampleRate: 48000, channels: 2, bitrate: 128_000 },
  };
  const withVideo = (video: Partial<NonNullable<VideoProbe["video"]>>): VideoProbe => ({
    ...valid,
    video: { ...valid.video!, ...video },
  });

  it.each<[string, VideoProbe, string | null]>([
    ["a 9:16 1080p H.264 reel", valid, null],
    ["HEVC", withVideo({ codec: "hvc1", codecString: "hvc1.1.6.L120.90" }), null],
    ["no audio", { ...valid, audio: null }, null],
    ["a MOV", { ...valid, container: "mov", mimeType: "video/quicktime" }, null],
    ["exactly 3 s", { ...valid, durationSeconds: 3 }, null],
    ["exactly 15 min", { ...valid, durationSeconds: 900 }, null],
    ["2.9 s", { ...valid, durationSeconds: 2.9 }, "the video is 2.9 s long; reels must be 3 s to 15 min"],
    ["15 min 1 s", { ...valid, durationSeconds: 901 }, "the video is 901 s long; reels must be 3 s to 15 min"],
    [
      "VP9",
      withVideo({ codec: "vp09", codecString: "vp09.00.10.08" }),
      "the video codec is vp09.00.10.08; reels need H.264 (avc1) or HEVC (hvc1/hev1)",
    ],
    [
      "H.264 4:4:4",
      withVideo({ codecString: "avc1.f4000d" }),
      "the H.264 profile (avc1.f4000d) is not 4:2:0; reels need 4:2:0 chroma",
    ],
    [
      "2160 px wide",
      withVideo({ width: 2160, height: 3840 }),
      "the video is 2160 px wide; reels allow at most 1920 px",
    ],
    ["22 fps", withVideo({ fps: 22 }), "the frame rate is 22 fps; reels need 23 to 60 fps"],
    ["120 fps", withVideo({ fps: 120 }), "the frame rate is 120 fps; reels need 23 to 60 fps"],
    ["23.976 fps", withVideo({ fps: 23.976 }), null],
    ["an 11:1 strip", withVideo({ width: 1100, height: 100 }), "the aspect ratio 1100:100 is outside 0.01:1 to 10:1"],
    [
      "MP3 audio",
      { ...valid, audio: { ...valid.audio!, codecString: "mp4a.6B" } },
      "the audio codec is mp4a.6B; reels need AAC audio (or no audio)",
    ],
    [
      "Opus audio",
      { ...valid, audio: { ...valid.audio!, codec: "Opus", codecString: "Opus" } },
      "the audio codec is Opus; reels need AAC audio (or no audio)",
    ],
    ["no video track", { ...valid, video: null }, "the file has no video track"],
  ])("%s", (_name, probe, problem) => {
    expect(checkReelSpec(probe).problems).toEqual(problem ? [problem] : []);
  });

  it("warns, without refusing, about what Meta only recommends", () => {
    const { problems, warnings } = checkReelSpec({
      ...withVideo({ width: 1920, height: 1080, bitrate: 30_000_000 }),
      moovBeforeMdat: false,
      editLists: "complex",
    });
    expect(problems).toEqual([]);
    expect(warnings).toEqual([
      "the aspect ratio 1920:1080 is not the recommended 9:16",
      "the video bitrate is 30 Mbps; Meta recommends at most 25 Mbps",
      "the moov atom is after the media data; Meta recommends it at the front (ffmpeg -movflags +faststart)",
      "the file has edit lists that cut or delay tracks; Meta recommends none",
    ]);
  });
});
