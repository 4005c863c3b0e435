import { describe, expect, it } from "vitest";
import { authenticate, KeyRing, SESSION_COOKIE } from "@/lib/auth";
import { ApiError } from "@/lib/errors";

const keys = new KeyRing([
  { tenantId: "acme", key: "acme-key-0123456789abcdef" },
  { tenantId: "globex", key: "globex-key-0123456789abcdef" },
]);
const request = (headers: Record<string, string>) => new Request("http://x/", { headers });

describe("authentication", () => {
  it("maps a Bearer key to its tenant", () => {
    expect(authenticate(request({ authorization: "Bearer acme-key-0123456789abcdef" }), keys)).toEqual({ tenantId: "acme" });
    expect(authenticate(request({ authorization: "bearer globex-key-0123456789abcdef" }), keys)).toEqual({ tenantId: "globex" });
  });

  it.each([
    ["no credentials", {}],
    ["an unknown key", { authorization: "Bearer nope-0123456789abcdef" }],
    ["a Basic header", { authorization: "Basic YWNtZTprZXk=" }],
    ["a forged session", { cookie: `${SESSION_COOKIE}=YWNtZQ.9999999999.forged` }],
  ])("answers 401 for %s", (_name, headers) => {
    try {
      authenticate(request(headers), keys);
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).status).toBe(401);
    }
  });

  it("accepts its own session cookie until it expires", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    const { value, maxAge } = keys.issueSession("acme", now);
    expect(keys.tenantForSession(value, now)).toBe("acme");
    expect(keys.tenantForSession(value, now + maxAge * 1000 + 1000)).toBeUndefined();
    const other = new KeyRing([{ tenantId: "acme", key: "another-key-0123456789abcdef" }]);
    expect(other.tenantForSession(value, now)).toBeUndefined();
  });
});
