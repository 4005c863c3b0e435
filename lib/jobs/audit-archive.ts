import { createReadStream } from "node:fs";
import { mkdir, open, readdir, type FileHandle } from "node:fs/promises";
import path from "node:path";
import readline from "node:readline";

/**
 * The audit log's durable copy on disk, for a broker that does not keep it: the embedded mock
 * broker holds a bounded log per partition in memory, so `npm start` turns this on (AUDIT_ARCHIVE_DIR).
 * A worker appends each completed event, the JSON it produces, as one line; lines are at least once
 * (a crash between the write and the job's `audited` mark leaves a second), so readers key on job_id.
 *
 * One file per writer and UTC day, `<dir>/<YYYY-MM-DD>.<writer>.jsonl`: no two processes append to
 * one file, and the files rotate daily without a rename.
 */
export interface AuditArchive {
  /**
   * Appends a line. The lines of one turn of the event loop (and those that come while a write is
   * under way) go in one write, and each caller resolves once that write is done, or sees it fail.
   */
  append(line: string): Promise<void>;
  /** Waits for what was appended, then closes the file. */
  close(): Promise<void>;
}

const ARCHIVE_FILE = /^\d{4}-\d{2}-\d{2}\..+\.jsonl$/;

export function createAuditArchive(dir: string, writer: string, now: () => number = Date.now): AuditArchive {
  return new AuditArchiveFiles(dir, writer.replace(/[^A-Za-z0-9_.-]/g, "_"), now);
}

interface Batch {
  lines: string[];
  written: Promise<void>;
}

class AuditArchiveFiles implements AuditArchive {
  private open: Batch | undefined;
  /** The last batch's write, settled either way: the next one starts after it, so lines keep their order. */
  private writing: Promise<void> = Promise.resolve();
  private file: { day: string; handle: FileHandle } | undefined;

  constructor(
    private readonly dir: string,
    private readonly writer: string,
    private readonly now: () => number,
  ) {}

  append(line: string): Promise<void> {
    const batch = (this.open ??= this.startBatch());
    batch.lines.push(line);
    return batch.written;
  }

  async close(): Promise<void> {
    await this.writing;
    const file = this.file;
    this.file = undefined;
    await file?.handle.close();
  }

  private startBatch(): Batch {
    const batch: Batch = { lines: [], written: Promise.resolve() };
    const turnEnded = new Promise<void>((resolve) => setImmediate(resolve));
    batch.written = Promise.all([turnEnded, this.writing]).then(() => {
      if (this.open === batch) this.open = undefined;
      return this.writeLines(batch.lines);
    });
    // The batch's callers see its failure; the next batch tries again on its own.
    this.writing = batch.written.catch(() => undefined);
    return batch;
  }

  private async writeLines(lines: string[]): Promise<void> {
    const { handle, startsMidLine } = await this.fileOf(new Date(this.now()).toISOString().slice(0, 10));
    const data = Buffer.from(`${startsMidLine ? "\n" : ""}${lines.join("\n")}\n`);
    try {
      for (let offset = 0; offset < data.length;)
        offset += (await handle.write(data, offset, data.length - offset)).bytesWritten;
    } catch (error) {
      // A write cut short may have left half a line: the file is opened again, which ends it first.
      this.file = undefined;
      await handle.close().catch(() => undefined); // the write's error is the one to report
      throw error;
    }
  }

  /** Today's file, opened once (appending); a file whose last line was cut short is ended before the first new one. */
  private async fileOf(day: string): Promise<{ handle: FileHandle; startsMidLine: boolean }> {
    if (this.file?.day === day) return { handle: this.file.handle, startsMidLine: false };
    const previous = this.file;
    this.file = undefined;
    await previous?.handle.close();
    await mkdir(this.dir, { recursive: true });
    const handle = await open(path.join(this.dir, `${day}.${this.writer}.jsonl`), "a+");
    try {
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      this.file = { day, handle };
      return { handle, startsMidLine: size > 0 && last[0] !== 0x0a };
    } catch (error) {
      await handle.close().catch(() => undefined); // the stat's or read's error is the one to report
      throw error;
    }
  }
}

/**
 * Every line of every archive file in `dir`, oldest day first, to `onLine`; a directory that does
 * not exist holds none. A line is one event's JSON, or a fragment a crash cut short (not JSON).
 */
export async function readAuditArchive(
  dir: string,
  onLine: (line: string) => void,
): Promise<{ files: number; lines: number }> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  const files = names.filter((name) => ARCHIVE_FILE.test(name)).sort();
  let lines = 0;
  for (const name of files) {
    const input = createReadStream(path.join(dir, name), { encoding: "utf8" });
    for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) {
      if (!line) continue;
      lines++;
      onLine(line);
    }
  }
  return { files: files.length, lines };
}
