import { describe, expect, it } from "vitest";
import { assertSameOrigin, authenticate, clientAddress, KeyRing, PEER_HEADER, SESSION_COOKIE } from "@/lib/web/auth";
import { ApiError } from "@/lib/errors";
import type { AuthThrottle } from "@/lib/web/rate-limit";
import type { Redis } from "@/lib/redis";
import { SessionStore } from "@/lib/web/sessions";

const keys = new KeyRing([
  { tenantId: "acme", key: "acme-key-0123456789abcdef" },
  { tenantId: "globex", key: "globex-key-0123456789abcdef" },
]);

/** Just enough of Redis for sessions: SET with EX, GET, DEL. */
function fakeRedis() {
  const values = new Map<string, string>();
  return {
    values,
    redis: {
      set: async (key: string, value: string) => void values.set(key, value),
      get: async (key: string) => values.get(key) ?? null,
      del: async (key: string) => Number(values.delete(key)),
    } as unknown as Redis,
  };
}

/** Counts failures per address and refuses past `limit`, like the GCRA in Redis does. */
function fakeThrottle(limit = 3): AuthThrottle & { failures: Map<string, number> } {
  const failures = new Map<string, number>();
  const over = (address: string) => (failures.get(address) ?? 0) >= limit;
  const refuse = () => new ApiError("rate-limited", "slow down", undefined, { "Retry-After": "6" });
  return {
    failures,
    async check(address) {
      if (over(address)) throw refuse();
    },
    async fail(address) {
      if (over(address)) throw refuse();
      failures.set(address, (failures.get(address) ?? 0) + 1);
    },
  };
}

const secret = Buffer.from("a-test-secret-of-at-least-32-characters");
const setup = () => {
  const store = fakeRedis();
  const sessions = new SessionStore(store.redis, secret);
  const throttle = fakeThrottle();
  return { store, sessions, throttle, deps: { keys, sessions, throttle } };
};
const request = (headers: Record<string, string>, method = "GET") =>
  new Request("http://dispatch.test/", { method, headers });
const statusOf = async (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: ApiError) => error.status,
  );

describe("authentication", () => {
  it("maps a Bearer key to its tenant", async () => {
    const { deps } = setup();
    expect(await authenticate(request({ authorization: "Bearer acme-key-0123456789abcdef" }), deps)).toEqual({
      tenantId: "acme",
    });
    expect(await authenticate(request({ authorization: "bearer globex-key-0123456789abcdef" }), deps)).toEqual({
      tenantId: "globex",
    });
  });

  it.each([
    ["no credentials", {}],
    ["an unknown key", { authorization: "Bearer nope-0123456789abcdef" }],
    ["a Basic header", { authorization: "Basic YWNtZTprZXk=" }],
    ["a forged session", { cookie: `${SESSION_COOKIE}=c2Vzc2lvbg.forged` }],
    ["an old-style signed session", { cookie: `${SESSION_COOKIE}=YWNtZQ.9999999999.forged` }],
    ["a session cookie with a malformed percent-encoding", { cookie: `${SESSION_COOKIE}=%E0%A4%A` }],
  ])("answers 401 for %s", async (_name, headers) => {
    const { deps } = setup();
    expect(await statusOf(authenticate(request(headers), deps))).toBe(401);
  });

  it("accepts a session until it is revoked; a copy of the cookie stops working too", async () => {
    const { deps, sessions } = setup();
    const { value, maxAge } = await sessions.create("acme");
    expect(maxAge).toBe(7 * 24 * 3600);
    const cookie = { cookie: `${SESSION_COOKIE}=${encodeURIComponent(value)}` };
    expect(await authenticate(request(cookie), deps)).toEqual({ tenantId: "acme" });
    await sessions.revoke(value);
    expect(await statusOf(authenticate(request(cookie), deps))).toBe(401);
  });

  it("keeps only a random id in Redis and the cookie, signed with the session secret, nothing of the key", async () => {
    const { store, sessions } = setup();
    const { value } = await sessions.create("acme");
    expect(value).not.toContain("acme");
    expect([...store.values.keys()]).toEqual([`session:${value.split(".")[0]}`]);
    const elsewhere = new SessionStore(store.redis, Buffer.from("another-secret-of-at-least-32-characters"));
    expect(await elsewhere.tenantFor(value)).toBeUndefined();
  });
});

describe("throttling failed checks per client address", () => {
  it("answers 429 after too many failures from one address, even for a right key, and leaves other addresses alone", async () => {
    const { deps } = setup();
    const from = (address: string, key: string) => request({ authorization: `Bearer ${key}`, [PEER_HEADER]: address });
    for (let i = 0; i < 3; i++)
      expect(await statusOf(authenticate(from("203.0.113.7", "wrong-0123456789abcdef"), deps))).toBe(401);
    expect(await statusOf(authenticate(from("203.0.113.7", "wrong-0123456789abcdef"), deps))).toBe(429);
    expect(await statusOf(authenticate(from("203.0.113.7", "acme-key-0123456789abcdef"), deps))).toBe(429);
    expect(await statusOf(authenticate(from("198.51.100.1", "acme-key-0123456789abcdef"), deps))).toBe(200);
  });

  it.each([
    ["the socket's peer", { [PEER_HEADER]: "203.0.113.7", "x-forwarded-for": "10.9.9.9" }, "203.0.113.7"],
    [
      "what a local proxy appended",
      { [PEER_HEADER]: "127.0.0.1", "x-forwarded-for": "1.1.1.1, 203.0.113.7" },
      "203.0.113.7",
    ],
    ["nothing for a local client without a proxy", { [PEER_HEADER]: "::ffff:127.0.0.1" }, undefined],
    ["no spoofed loopback", { [PEER_HEADER]: "203.0.113.7", "x-forwarded-for": "127.0.0.1" }, "203.0.113.7"],
  ])("counts %s", (_name, headers, address) => {
    expect(clientAddress(request(headers))).toBe(address);
  });
});

describe("cross-site requests with the session cookie", () => {
  it.each([
    ["Sec-Fetch-Site cross-site", { "sec-fetch-site": "cross-site" }, 403],
    ["Sec-Fetch-Site same-site (a sibling subdomain)", { "sec-fetch-site": "same-site" }, 403],
    ["an Origin of another host", { origin: "https://evil.example" }, 403],
    ["a malformed Origin", { origin: "null" }, 403],
    ["Sec-Fetch-Site same-origin", { "sec-fetch-site": "same-origin", origin: "http://dispatch.test" }, 200],
    ["its own Origin", { origin: "http://dispatch.test" }, 200],
    ["no browser headers at all (curl)", {}, 200],
  ])("%s → %i", async (_name, headers, status) => {
    const { deps, sessions } = setup();
    const { value } = await sessions.create("acme");
    const cookie = `${SESSION_COOKIE}=${value}`;
    expect(await statusOf(authenticate(request({ cookie, ...headers }, "POST"), deps))).toBe(status);
    // Reading is never refused, and a Bearer key is never checked for its origin.
    expect(await statusOf(authenticate(request({ cookie, ...headers }, "GET"), deps))).toBe(200);
    expect(
      await statusOf(
        authenticate(request({ authorization: "Bearer acme-key-0123456789abcdef", ...headers }, "DELETE"), deps),
      ),
    ).toBe(200);
  });

  it("checks sign-in and sign-out the same way", () => {
    expect(() => assertSameOrigin(request({ origin: "https://evil.example" }, "POST"))).toThrow(ApiError);
    expect(() => assertSameOrigin(request({ origin: "http://dispatch.test" }, "POST"))).not.toThrow();
  });
});
