import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { firstFilePart, multipartBoundary } from "@/lib/uploads/multipart-file";

/** A body cut into pieces of `size` bytes, so boundaries and headers fall across chunks. */
function streamOf(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

async function collect(body: ReadableStream<Uint8Array>, boundary: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of firstFilePart(body, boundary)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function encoded(form: FormData): Promise<{ bytes: Uint8Array; boundary: string }> {
  const response = new Response(form);
  return {
    bytes: new Uint8Array(await response.arrayBuffer()),
    boundary: multipartBoundary(response.headers.get("content-type") ?? "") ?? "",
  };
}

describe("firstFilePart", () => {
  // Bytes that look like a boundary's start ("\r\n--") inside the file must not end it.
  const file = Buffer.concat([
    Buffer.from("ftyp\r\n--not-the-boundary\r\n"),
    Buffer.alloc(5000, 7),
    Buffer.from("\r\n-"),
  ]);

  for (const size of [1, 7, 64, 100_000]) {
    it(`yields exactly the file's bytes, after a text field, in chunks of ${size}`, async () => {
      const form = new FormData();
      form.set("caption", "first a text field");
      form.set("video", new Blob([file]), "reel.mp4");
      form.set("after", "a field after the file");
      const { bytes, boundary } = await encoded(form);
      expect((await collect(streamOf(bytes, size), boundary)).equals(file)).toBe(true);
    });
  }

  it("refuses a form without a file part, and a body cut inside the file, as 422s", async () => {
    const form = new FormData();
    form.set("caption", "no file here");
    const noFile = await encoded(form);
    await expect(collect(streamOf(noFile.bytes, 16), noFile.boundary)).rejects.toSatisfy(
      (e) => e instanceof ApiError && e.status === 422,
    );

    const withFile = new FormData();
    withFile.set("video", new Blob([file]), "reel.mp4");
    const cut = await encoded(withFile);
    await expect(collect(streamOf(cut.bytes.subarray(0, cut.bytes.length - 60), 64), cut.boundary)).rejects.toThrow(
      /ended inside the file/,
    );
  });

  it("reads the boundary, quoted or not", () => {
    expect(multipartBoundary('multipart/form-data; boundary="abc def"')).toBe("abc def");
    expect(multipartBoundary("multipart/form-data; boundary=----x123; charset=utf-8")).toBe("----x123");
    expect(multipartBoundary("multipart/form-data")).toBeUndefined();
  });
});
