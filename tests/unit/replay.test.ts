import { describe, expect, it } from "vitest";
import { startAt } from "@/lib/jobs/replay-deltas";
import { outputFromEvents } from "@/lib/jobs/read-job";
import type { StreamMessage } from "@/lib/jobs/stream-message";

const d = (seq: number, delta: string): StreamMessage => ({ seq, delta, is_final: false });
const reset = (seq: number): StreamMessage => ({ seq, delta: "", is_final: false, reset: true, attempt: 2 });

describe("what a returning stream client gets", () => {
  const firstTry = [d(1, "a"), d(2, "b"), d(3, "c")];
  it.each([
    ["a new client gets everything", firstTry, 0, [1, 2, 3]],
    ["a client resumes after what it saw", firstTry, 2, [3]],
    ["a client that saw everything gets nothing stored", firstTry, 3, []],
    ["a new client skips an abandoned attempt", [...firstTry, reset(4), d(5, "x")], 0, [4, 5]],
    [
      "a client in the middle of an abandoned attempt is told to start over",
      [...firstTry, reset(4), d(5, "x")],
      2,
      [4, 5],
    ],
    ["a client past the restart resumes normally", [...firstTry, reset(4), d(5, "x"), d(6, "y")], 5, [6]],
  ])("%s", (_name, stored, after, seqs) => {
    expect(startAt(stored, after).map((m) => m.seq)).toEqual(seqs);
  });

  it("builds the output of the current attempt only", () => {
    const raw = [...firstTry, reset(4), d(5, "x"), d(6, "y")].map((m) => JSON.stringify(m));
    expect(outputFromEvents(raw)).toBe("xy");
  });
});
