import { describe, expect, it } from "vitest";
import { reduceJobStream, type Action, type StreamState } from "@/components/jobs/use-job-stream";

const start: StreamState = { text: "", lastSeq: 0, phase: "idle", deltas: 0 };
const delta = (seq: number, text: string, count = 1): Action => ({
  type: "delta",
  seq,
  delta: text,
  count,
  isFinal: false,
  at: seq,
});

describe("the dashboard's job stream state", () => {
  it("counts the model's deltas a message joins, so the live token figures hold when the worker was behind", () => {
    const events = [
      delta(1, " one"),
      delta(2, " two three four", 3),
      delta(2, " two three four", 3),
      delta(3, " five"),
    ];
    const state = events.reduce(reduceJobStream, start);
    // The repeated seq 2 (a replay after a reconnect) is dropped.
    expect(state).toMatchObject({ text: " one two three four five", deltas: 5, lastSeq: 3 });
  });

  it("starts the count over on a reset", () => {
    const state = [delta(1, " a", 2), { type: "reset", seq: 2, attempt: 2 } as Action, delta(3, " b")].reduce(
      reduceJobStream,
      start,
    );
    expect(state).toMatchObject({ text: " b", deltas: 1, attempt: 2 });
  });
});
