import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { fileResponse, fileStream, parseRange } from "@/lib/web/file-response";
import { getMetrics } from "@/lib/metrics";

const dir = mkdtempSync(path.join(tmpdir(), "file-response-"));
const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
const file = path.join(dir, "bytes.bin");
writeFileSync(file, bytes);

describe("parseRange", () => {
  it.each([
    [null, 100, undefined],
    ["bytes=0-9", 100, [0, 9]],
    ["bytes=90-", 100, [90, 99]],
    ["bytes=90-500", 100, [90, 99]],
    ["bytes=-10", 100, [90, 99]],
    ["bytes=-500", 100, [0, 99]],
    ["bytes=100-", 100, "unsatisfiable"],
    ["bytes=9-0", 100, "unsatisfiable"],
    ["bytes=-0", 100, "unsatisfiable"],
    ["bytes=-", 100, undefined],
    ["bytes=0-1,5-6", 100, undefined],
    ["items=0-9", 100, undefined],
  ] as const)("%s of %i bytes → %j", (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

describe("fileResponse", () => {
  it("streams a range across chunk boundaries, byte for byte", async () => {
    const response = fileResponse(new Request("http://x/f", { headers: { range: "bytes=1000-150000" } }), {
      path: file,
      size: bytes.length,
      headers: { etag: '"e"' },
    });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe(`bytes 1000-150000/${bytes.length}`);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes.subarray(1000, 150_001))).toBe(true);
  });

  it("sends the whole file when If-Range names another version", async () => {
    const response = fileResponse(new Request("http://x/f", { headers: { range: "bytes=0-9", "if-range": '"old"' } }), {
      path: file,
      size: bytes.length,
      headers: { etag: '"e"' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String(bytes.length));
    await response.body?.cancel();
  });
});

describe("fileStream", () => {
  it("errors, rather than ending short, when the file is shorter than promised", async () => {
    await expect(new Response(fileStream(file, 0, bytes.length + 10)).arrayBuffer()).rejects.toThrow(
      /ended at byte 200000/,
    );
  });

  it("errors when the file is missing, and a cancel before or during a read resolves", async () => {
    await expect(new Response(fileStream(path.join(dir, "missing"), 0, 9)).arrayBuffer()).rejects.toThrow(/ENOENT/);
    await fileStream(file, 0, 9).cancel();
    const reader = fileStream(file, 0, bytes.length - 1).getReader();
    const read = reader.read();
    await reader.cancel();
    expect(await read).toEqual({ done: true, value: undefined });
  });

  it("counts a stream as open from its first read until it ends, fails or is cancelled", async () => {
    const open = async () => (await getMetrics().fileStreamsOpen.get()).values[0]?.value ?? 0;
    const before = await open();
    await fileStream(file, 0, 9).cancel();
    expect(await open()).toBe(before);

    const reader = fileStream(file, 0, bytes.length - 1).getReader();
    await reader.read();
    expect(await open()).toBe(before + 1);
    await reader.cancel();
    expect(await open()).toBe(before);

    await new Response(fileStream(file, 0, 9)).arrayBuffer();
    await expect(new Response(fileStream(path.join(dir, "missing"), 0, 9)).arrayBuffer()).rejects.toThrow(/ENOENT/);
    expect(await open()).toBe(before);
  });

  it("closes its file when the request is aborted, even if nobody cancels or reads the stream again", async () => {
    const open = async () => (await getMetrics().fileStreamsOpen.get()).values[0]?.value ?? 0;
    const before = await open();
    const client = new AbortController();
    const reader = fileStream(file, 0, bytes.length - 1, client.signal).getReader();
    await reader.read();
    expect(await open()).toBe(before + 1);
    client.abort();
    await vi.waitFor(async () => expect(await open()).toBe(before));

    // A request already gone opens nothing.
    const gone = new AbortController();
    gone.abort();
    void fileStream(file, 0, 9, gone.signal).getReader().read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await open()).toBe(before);
  });
});
