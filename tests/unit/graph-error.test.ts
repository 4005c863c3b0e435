import { describe, expect, it } from "vitest";
import {
  GraphError,
  GraphTransportError,
  isTransientGraphFailure,
  subcodeFromContainerStatus,
} from "@/lib/graph/error";
import { classifyGraphError, GRAPH_ERRORS, graphErrorForSubcode, type GraphErrorAction } from "@/lib/graph/error-table";
import { errorOf } from "@/lib/graph/failure-view";
import { VideoProbeError } from "@/lib/video/video-probe-error";

describe("classifyGraphError", () => {
  it.each<[number, number | undefined, GraphErrorAction]>([
    [1, undefined, "retry"],
    [2, undefined, "retry"],
    [4, undefined, "wait-rate-limit"],
    [17, undefined, "wait-rate-limit"],
    [32, undefined, "wait-rate-limit"],
    [613, undefined, "wait-rate-limit"],
    [80002, undefined, "wait-rate-limit"],
    [10, undefined, "reconnect-account"],
    [200, undefined, "reconnect-account"],
    [299, undefined, "reconnect-account"],
    [100, undefined, "fix-input"],
    [100, 33, "fix-input"],
    [190, undefined, "reconnect-account"],
    [190, 458, "reconnect-account"],
    [190, 460, "reconnect-account"],
    [190, 463, "reconnect-account"],
    [368, undefined, "stop"],
    [-1, 2207001, "retry"],
    [-1, 2207032, "retry"],
    [-1, 2207053, "new-container"],
    [-2, 2207003, "retry"],
    [-2, 2207020, "new-container"],
    [9, 2207042, "wait-quota"],
    [9, undefined, "wait-quota"],
    [24, 2207006, "new-container"],
    [24, 2207008, "retry"],
    [25, 2207050, "stop"],
    [352, 2207026, "fix-input"],
    [9004, 2207052, "fix-input"],
    [9007, 2207027, "not-ready"],
    [9007, undefined, "not-ready"],
    [2500, undefined, "fix-input"],
    [12345, undefined, "stop"],
  ])("code %s subcode %s → %s", (code, subcode, action) => {
    const result = classifyGraphError(code, subcode);
    expect(result.action).toBe(action);
    expect(result.advice.length).toBeGreaterThan(10);
  });

  it("gives every entry a one-sentence headline in plain words", () => {
    for (const entry of GRAPH_ERRORS) expect(entry.headline).toMatch(/^[A-Z][^\n]*\.$/);
    expect(classifyGraphError(9004, 2207052).headline).toBe("Instagram could not fetch the video from its URL.");
    expect(classifyGraphError(230).headline).toBe(classifyGraphError(10).headline);
  });

  it("retries an unknown code that Graph marked transient", () => {
    expect(classifyGraphError(12345, undefined, true).action).toBe("retry");
    expect(classifyGraphError(12345, undefined, false).action).toBe("stop");
  });

  it("knows a subcode that arrives under an unexpected code", () => {
    expect(classifyGraphError(-3, 2207026).action).toBe("fix-input");
  });
});

describe("container ERROR statuses", () => {
  it.each([
    ["Error: unsupported video format: the video is 1.5 s long (2207026)", 2207026, 352],
    ["Error: Media upload has failed with error code 2207052", 2207052, 9004],
    ["Finished: Media has been uploaded and it is ready to be published.", undefined, undefined],
  ])("%s", (status, subcode, code) => {
    expect(subcodeFromContainerStatus(status)).toBe(subcode);
    expect(subcode ? graphErrorForSubcode(subcode)?.code : undefined).toBe(code);
  });
});

describe("GraphError", () => {
  it("serialises Graph's error object, with a trace id", () => {
    const error = new GraphError({
      code: 9007,
      subcode: 2207027,
      message: "Media ID is not available",
      userTitle: "Media Not Ready",
      userMessage: "Wait.",
    });
    expect(error.toBody()).toEqual({
      error: {
        message: "Media ID is not available",
        type: "OAuthException",
        code: 9007,
        error_subcode: 2207027,
        is_transient: false,
        error_user_title: "Media Not Ready",
        error_user_msg: "Wait.",
        fbtrace_id: expect.stringMatching(/^[A-Za-z0-9_-]{23}$/),
      },
    });
    expect(error.status).toBe(400);
    expect(error.action).toBe("not-ready");
  });

  it("reads a Graph error response back, tolerating missing and stringly fields", () => {
    const error = GraphError.fromResponse(
      { error: { message: "Invalid OAuth access token", code: "190", error_subcode: 460, fbtrace_id: "Abc" } },
      400,
    );
    expect(error).toMatchObject({
      code: 190,
      subcode: 460,
      type: "OAuthException",
      status: 400,
      fbtraceId: "Abc",
      action: "reconnect-account",
    });
    expect(GraphError.fromResponse({ id: "1" }, 200)).toBeUndefined();
  });

  it("uses 500 for Graph's own failures and marks them transient", () => {
    const error = new GraphError({ code: 1, message: "An unknown error has occurred." });
    expect(error.status).toBe(500);
    expect(error.isTransient).toBe(true);
  });

  it("recognises Graph's errors made by another copy of their module (the web server bundles lib more than once)", async () => {
    // @ts-expect-error a query string makes vite load a second copy of the module
    const errors = (await import("@/lib/graph/error?another-copy")) as typeof import("@/lib/graph/error");
    const probe = (await import(
      // @ts-expect-error as above
      "@/lib/video/video-probe-error?another-copy"
    )) as typeof import("@/lib/video/video-probe-error");
    expect(errors.GraphError).not.toBe(GraphError);
    const refused = new errors.GraphError({ code: 190, subcode: 460, message: "Error validating access token" });
    expect(refused instanceof GraphError).toBe(true);
    expect(errorOf(refused)).toMatchObject({ code: 190, subcode: 460, classification: "reconnect-account" });
    const transport = new errors.GraphTransportError("ECONNRESET", null, true);
    expect(transport instanceof GraphTransportError).toBe(true);
    expect(isTransientGraphFailure(transport)).toBe(true);
    expect(new probe.VideoProbeError("not an MP4") instanceof VideoProbeError).toBe(true);
    // The brand is each class's own: one is never taken for another, nor a plain Error for any.
    expect(transport instanceof GraphError).toBe(false);
    expect(refused instanceof GraphTransportError).toBe(false);
    expect(new Error("plain") instanceof GraphError).toBe(false);
  });

  it("gives each error its own trace id", () => {
    const a = new GraphError({ code: 100, message: "x" });
    const b = new GraphError({ code: 100, message: "x" });
    expect(a.fbtraceId).not.toBe(b.fbtraceId);
  });
});
