import { describe, expect, it } from "vitest";
import type { StreamMessage } from "@/lib/jobs/stream-message";
import { deltaFrame } from "@/lib/jobs/replay-deltas";
import { coalescingWriter, sseResponse } from "@/lib/web/sse";

const d = (seq: number, delta: string, is_final = false): StreamMessage => ({ seq, delta, is_final });
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Every chunk of a response body, as text, until it ends. */
async function chunks(response: Response): Promise<string[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const out: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(decoder.decode(r.value));
  return out;
}

/** A controller that records what it is asked to do; `broken` makes enqueue throw as a cancelled stream's does. */
function recordingController(broken = false) {
  const calls: string[] = [];
  const controller = {
    enqueue(chunk: Uint8Array) {
      if (broken) throw new TypeError("Invalid state: Controller is already closed");
      calls.push(`enqueue ${new TextDecoder().decode(chunk)}`);
    },
    close() {
      calls.push("close");
    },
  } as unknown as ReadableStreamDefaultController<Uint8Array>;
  return { calls, controller };
}

describe("SSE responses coalesce what a client is due within one turn", () => {
  it("sends the batches that arrive in one turn as one chunk, in order, and ends after the source", async () => {
    async function* source(): AsyncGenerator<StreamMessage[]> {
      yield [d(1, "a")];
      yield [d(2, "b"), d(3, "c")];
      yield [d(4, "d")];
      await turn();
      yield [d(5, "", true)];
    }
    const got = await chunks(sseResponse(source, deltaFrame, new AbortController().signal));
    expect(got).toHaveLength(3);
    expect(got[0]).toBe("retry: 1000\n\n");
    expect([...got[1].matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([1, 2, 3, 4]);
    expect(got[1]).toContain('data: {"delta":"c","is_final":false}\n\n');
    expect(got[2]).toBe('id: 5\nevent: delta\ndata: {"delta":"","is_final":true}\n\n');
  });

  it("keeps keep-alive comments in order with the frames", async () => {
    async function* source(): AsyncGenerator<StreamMessage[]> {
      await new Promise((resolve) => setTimeout(resolve, 30));
      yield [d(1, "a", true)];
    }
    const text = (await chunks(sseResponse(source, deltaFrame, new AbortController().signal, 10))).join("");
    expect(text.startsWith("retry: 1000\n\n: keep-alive\n\n")).toBe(true);
    expect(text.endsWith('id: 1\nevent: delta\ndata: {"delta":"a","is_final":true}\n\n')).toBe(true);
  });

  it("stops the source and writes nothing once the client cancels", async () => {
    let aborted = false;
    let produced = 0;
    async function* source(signal: AbortSignal): AsyncGenerator<StreamMessage[]> {
      signal.addEventListener("abort", () => (aborted = true));
      for (let seq = 1; !signal.aborted; seq++) {
        produced++;
        yield [d(seq, "x")];
        await turn();
      }
    }
    const reader = sseResponse(source, deltaFrame, new AbortController().signal).body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    const after = produced;
    await turn();
    await turn();
    expect(aborted).toBe(true);
    expect(produced - after).toBeLessThanOrEqual(1);
  });
});

describe("coalescingWriter", () => {
  it("enqueues everything written in a turn once, at the end of the turn", async () => {
    const { calls, controller } = recordingController();
    const out = coalescingWriter(controller, () => {});
    out.write("a");
    out.write("b");
    expect(calls).toEqual([]);
    await turn();
    out.write("c");
    out.close();
    expect(calls).toEqual(["enqueue ab", "enqueue c", "close"]);
  });

  it("never touches the controller after cancel", async () => {
    const { calls, controller } = recordingController();
    const out = coalescingWriter(controller, () => {});
    out.write("a");
    out.cancel();
    out.write("b");
    out.flush();
    out.close();
    await turn();
    expect(calls).toEqual([]);
  });

  it("reports a client gone away once and writes nothing more", async () => {
    const { calls, controller } = recordingController(true);
    let broken = 0;
    const out = coalescingWriter(controller, () => broken++);
    out.write("a");
    await turn();
    out.write("b");
    out.close();
    await turn();
    expect(broken).toBe(1);
    expect(calls).toEqual([]);
  });
});
