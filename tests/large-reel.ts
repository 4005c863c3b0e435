import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync } from "node:fs";
import path from "node:path";

/**
 * A reel of realistic size, too big to commit: 20 s of 1080x1920 H.264 (noise, so it does not
 * compress away) and AAC, about 8 MB, inside the reel specification. Big enough that a browser or
 * a test leaving mid-transfer leaves the server with back-pressure and unread bytes. Made once with
 * Debian's ffmpeg (scripts/setup.sh --test installs it) and kept in .test-data.
 */
export function largeReel(root: string): string {
  const file = path.join(root, ".test-data/large-reel.mp4");
  if (existsSync(file)) return file;
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.mp4`;
  execFileSync("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    "testsrc2=size=1080x1920:rate=30",
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=440:sample_rate=44100",
    "-t",
    "20",
    "-vf",
    "noise=alls=12:allf=t",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-profile:v",
    "main",
    "-pix_fmt",
    "yuv420p",
    "-b:v",
    "3M",
    "-maxrate",
    "3M",
    "-bufsize",
    "6M",
    "-g",
    "30",
    "-c:a",
    "aac",
    "-b:a",
    "64k",
    "-ac",
    "2",
    "-movflags",
    "+faststart",
    partial,
  ]);
  renameSync(partial, file);
  return file;
}
