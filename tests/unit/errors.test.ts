import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError, toProblem } from "@/lib/errors";
import { problemResponse, readJsonBody } from "@/lib/web/http";

const schema = z.strictObject({ name: z.string() });
const post = (body: BodyInit, type = "application/json", headers: Record<string, string> = {}) =>
  new Request("http://x/", { method: "POST", body, headers: { "content-type": type, ...headers } });

async function statusOf(request: Request) {
  try {
    await readJsonBody(request, schema, 64);
    return 200;
  } catch (error) {
    return problemResponse(error).status;
  }
}

describe("problem+json", () => {
  it.each([
    ["valid", post('{"name":"a"}'), 200],
    ["not JSON content type", post('{"name":"a"}', "text/plain"), 415],
    ["no content type", new Request("http://x/", { method: "POST", body: "{}" }), 415],
    ["broken JSON", post('{"name":'), 400],
    ["invalid UTF-8", post(new Uint8Array([0x7b, 0xff, 0x7d])), 400],
    ["over the size limit", post(JSON.stringify({ name: "x".repeat(100) })), 413],
    ["declared over the limit", post('{"name":"a"}', "application/json", { "content-length": "1000" }), 413],
    ["schema mismatch", post('{"name":1}'), 422],
    ["unknown field", post('{"name":"a","x":1}'), 422],
    ["JSON with charset", post('{"name":"a"}', "application/json; charset=utf-8"), 200],
  ])("%s", async (_name, request, status) => {
    expect(await statusOf(request)).toBe(status);
  });

  it("has one shape, with field errors for validation", async () => {
    const response = problemResponse(
      new ApiError("validation", "bad", [{ path: "prompt", message: "must not be empty" }]),
    );
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toEqual({
      type: "/problems/validation",
      title: "Unprocessable Content",
      status: 422,
      detail: "bad",
      errors: [{ path: "prompt", message: "must not be empty" }],
    });
  });

  it("hides the internals of unexpected errors", () => {
    const { problem } = toProblem(new Error("connection string redis://secret@host"));
    expect(problem.status).toBe(500);
    expect(JSON.stringify(problem)).not.toContain("secret");
  });

  it("answers an ApiError made by another copy of the module as itself (the server bundles lib more than once)", async () => {
    // @ts-expect-error a query string makes vite load a second copy of the module
    const copy = (await import("@/lib/errors?another-copy")) as typeof import("@/lib/errors");
    expect(copy.ApiError).not.toBe(ApiError);
    const response = problemResponse(new copy.ApiError("rate-limited", "slow down", undefined, { "Retry-After": "6" }));
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("6");
    expect(new Error("plain") instanceof ApiError).toBe(false);
  });

  it("carries headers such as Retry-After", () => {
    const response = problemResponse(new ApiError("unavailable", "down", undefined, { "Retry-After": "2" }));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("2");
  });
});
