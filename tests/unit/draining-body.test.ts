import { describe, expect, it } from "vitest";
import { drainingBody } from "@/lib/web/draining-body";

/** A body as a client sends it: `chunks` pieces of `size` bytes (Infinity: without end), recording what happened to it. */
function clientBody(chunks: number, size = 1000, { stall = false } = {}) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (stall && seen.pulled >= 1) return new Promise<void>(() => {}); // a client that stopped sending
        if (seen.pulled >= chunks) return controller.close();
        seen.pulled++;
        controller.enqueue(new Uint8Array(size));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

describe("drainingBody", () => {
  it("passes the body through unchanged", async () => {
    const { stream } = clientBody(3, 10);
    const reader = drainingBody(stream).getReader();
    const sizes: number[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) sizes.push(r.value.byteLength);
    expect(sizes).toEqual([10, 10, 10]);
  });

  it("reads what the client still sends before it lets go of a refused body, so the answer is not a reset", async () => {
    const { stream, seen } = clientBody(50);
    const reader = drainingBody(stream).getReader();
    await reader.read();
    await reader.cancel();
    expect(seen.pulled).toBe(50);
  });

  it("stops reading and closes once the client has sent more than the bound", async () => {
    const { stream, seen } = clientBody(Infinity, 1000);
    const reader = drainingBody(stream, { maxBytes: 10_000 }).getReader();
    await reader.read();
    await reader.cancel();
    expect(seen.pulled).toBeGreaterThan(10);
    expect(seen.pulled).toBeLessThan(20);
    expect(seen.cancelled).toBe(true);
  });

  it("gives up on a client that stops sending, after the time bound", async () => {
    const { stream, seen } = clientBody(Infinity, 1000, { stall: true });
    const reader = drainingBody(stream, { maxMs: 50 }).getReader();
    await reader.read();
    await reader.cancel();
    expect(seen.cancelled).toBe(true);
  });
});
