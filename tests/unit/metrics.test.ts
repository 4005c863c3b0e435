import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { graphEndpoint, tenantLabel } from "@/lib/metrics";
import { assertMetricsAccess } from "@/lib/metrics-endpoint";

describe("tenantLabel", () => {
  it("gives the first `limit` tenants their own value and every later one 'other', so the series stay bounded", () => {
    const seen = ["t-a", "t-b", "t-c", "t-d", "t-a", "t-e"].map((t) => tenantLabel(t, 3));
    expect(seen).toEqual(["t-a", "t-b", "t-c", "other", "t-a", "other"]);
    expect(tenantLabel("t-z", 0)).toBe("all");
  });
});

describe("graphEndpoint", () => {
  it.each([
    ["17841400000000001/media", "/{id}/media"],
    ["17841400000000001/media_publish", "/{id}/media_publish"],
    ["v21.0/17895695668004550?fields=status_code,status", "/{id}"],
    ["17841400000000001/content_publishing_limit", "/{id}/content_publishing_limit"],
  ])("%s → %s", (path, shape) => expect(graphEndpoint(path)).toBe(shape));
});

describe("assertMetricsAccess", () => {
  const TOKEN = "metrics-token-0123456789";
  const SITE = { fetchSite: null, origin: null, host: "127.0.0.1:3000" };
  it.each([
    {
      name: "the token",
      request: { authorization: `Bearer ${TOKEN}`, peer: "203.0.113.9", forwardedFor: null, site: SITE },
      token: TOKEN,
      status: null,
    },
    {
      name: "a wrong token",
      request: { authorization: "Bearer metrics-token-01234567890", peer: "127.0.0.1", forwardedFor: null, site: SITE },
      token: TOKEN,
      status: 401,
    },
    {
      name: "no token sent",
      request: { authorization: null, peer: "127.0.0.1", forwardedFor: null, site: SITE },
      token: TOKEN,
      status: 401,
    },
    {
      name: "no token configured, loopback",
      request: { authorization: null, peer: "::ffff:127.0.0.1", forwardedFor: null, site: SITE },
      token: undefined,
      status: null,
    },
    {
      name: "no token configured, a local proxy forwarding another machine",
      request: { authorization: null, peer: "127.0.0.1", forwardedFor: "198.51.100.4, 127.0.0.1", site: SITE },
      token: undefined,
      status: 403,
    },
    {
      name: "no token configured, Next's own X-Forwarded-For",
      request: { authorization: null, peer: "127.0.0.1", forwardedFor: "127.0.0.1", site: SITE },
      token: undefined,
      status: null,
    },
    {
      name: "no token configured, another machine",
      request: { authorization: null, peer: "10.0.0.7", forwardedFor: null, site: SITE },
      token: undefined,
      status: 403,
    },
    {
      name: "no token configured, loopback, a page of another site (Sec-Fetch-Site)",
      request: {
        authorization: null,
        peer: "127.0.0.1",
        forwardedFor: null,
        site: { ...SITE, fetchSite: "cross-site" },
      },
      token: undefined,
      status: 403,
    },
    {
      name: "no token configured, loopback, a page of another site (Origin only)",
      request: {
        authorization: null,
        peer: "127.0.0.1",
        forwardedFor: null,
        site: { ...SITE, origin: "http://evil.example" },
      },
      token: undefined,
      status: 403,
    },
    {
      name: "no token configured, loopback, typed into the address bar",
      request: { authorization: null, peer: "127.0.0.1", forwardedFor: null, site: { ...SITE, fetchSite: "none" } },
      token: undefined,
      status: null,
    },
    {
      name: "no token configured, loopback, its own origin",
      request: {
        authorization: null,
        peer: "127.0.0.1",
        forwardedFor: null,
        site: { ...SITE, origin: "http://127.0.0.1:3000" },
      },
      token: undefined,
      status: null,
    },
  ])("$name → $status", ({ request, token, status }) => {
    let thrown: unknown;
    try {
      assertMetricsAccess(request, token);
    } catch (error) {
      thrown = error;
    }
    if (status === null) expect(thrown).toBeUndefined();
    else expect(thrown instanceof ApiError && thrown.status).toBe(status);
  });
});
