import { describe, expect, it } from "vitest";
import { assertNoUncaught, findUncaught } from "../../scripts/lib/uncaught";

describe("findUncaught", () => {
  it.each([
    [
      "Next.js, an exception",
      "TypeError: Invalid state: Controller is already closed\n ⨯ uncaughtException:  TypeError: Invalid state",
      true,
    ],
    ["Next.js, a rejection", " ⨯ unhandledRejection:  Error: boom", true],
    [
      "Node dying of a rejection",
      "[UnhandledPromiseRejection: This error originated either by throwing inside of an async function]",
      true,
    ],
    ["Node dying of an exception", "Error: boom\n    at main (worker/index.ts:3:9)\n\nNode.js v20.20.2", true],
    [
      "ordinary logs",
      '{"level":"error","message":"unhandled route error"}\n ✓ Ready in 1204ms\nNode.js is fine',
      false,
    ],
  ])("%s", (_, output, found) => {
    expect(findUncaught(output).length > 0).toBe(found);
  });

  it("quotes the offending line and the error before it in the failure", () => {
    expect(() =>
      assertNoUncaught("ready\nTypeError: Invalid state\n ⨯ uncaughtException:  TypeError: Invalid state\n", "web"),
    ).toThrow(
      /web logged 1 uncaught exception\(s\) or unhandled rejection\(s\):\nTypeError: Invalid state\n ⨯ uncaughtException/,
    );
    expect(() => assertNoUncaught("ready\n", "web")).not.toThrow();
  });
});
