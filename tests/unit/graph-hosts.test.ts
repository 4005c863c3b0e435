import { describe, expect, it } from "vitest";
import { createGraphHosts, trustedGraphUrl } from "@/lib/graph/hosts";

const GRAPH_URL = "https://graph.facebook.com";
const INSTAGRAM = "https://graph.instagram.com";
const CONFIGURED = [GRAPH_URL, INSTAGRAM];

describe("trustedGraphUrl", () => {
  it.each([
    ["https://graph.instagram.com", INSTAGRAM],
    ["https://graph.instagram.com/", INSTAGRAM],
    ["https://GRAPH.instagram.com", INSTAGRAM],
    ["https://graph.instagram.com:443", INSTAGRAM],
    ["https://graph.facebook.com", GRAPH_URL],
  ])("accepts %s as the configured %s", (stored, expected) => {
    expect(trustedGraphUrl(stored, CONFIGURED)).toBe(expected);
  });

  it.each([
    "https://evil.example.com",
    "http://graph.instagram.com",
    "https://graph.instagram.com.evil.example.com",
    "https://graph.instagram.com:8443",
    "https://graph.instagram.com/other",
    "https://user:pass@graph.instagram.com",
    "https://graph.instagram.com?x=1",
    "https://graph.instagram.com#x",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "graph.instagram.com",
    "",
  ])("refuses %s", (stored) => {
    expect(trustedGraphUrl(stored, CONFIGURED)).toBeUndefined();
  });

  it("compares the path of a sandbox's host too", () => {
    const sandbox = ["http://127.0.0.1:3000/graph", "http://127.0.0.1:3100/graph/"];
    expect(trustedGraphUrl("http://127.0.0.1:3100/graph", sandbox)).toBe("http://127.0.0.1:3100/graph");
    expect(trustedGraphUrl("http://127.0.0.1:3100/", sandbox)).toBeUndefined();
  });
});

describe("createGraphHosts", () => {
  function hosts() {
    const seen: string[] = [];
    const fetch = (async (input: string | URL | Request) => {
      seen.push(String(input));
      return new Response(JSON.stringify({ id: "1", username: "u" }), {
        headers: { "content-type": "application/json" },
      });
    }) as typeof globalThis.fetch;
    return {
      seen,
      graphs: createGraphHosts({ graphUrl: GRAPH_URL, otherHosts: [INSTAGRAM], version: "v21.0", fetch }),
    };
  }
  const account = { accountId: "1", accessToken: "token" };

  it("sends an account's calls to its stored host, and one without a host to GRAPH_URL", async () => {
    const { seen, graphs } = hosts();
    await graphs.forAccount({ graphUrl: `${INSTAGRAM}/` })!.readAccount(account);
    await graphs.forAccount({ graphUrl: null })!.readAccount(account);
    await graphs.default.readAccount(account);
    expect(seen.map((url) => new URL(url).origin)).toEqual([INSTAGRAM, GRAPH_URL, GRAPH_URL]);
    expect(new URL(seen[0]).pathname).toBe("/v21.0/1");
  });

  it("makes one client per host", () => {
    const { graphs } = hosts();
    expect(graphs.forAccount({ graphUrl: INSTAGRAM })).toBe(graphs.forAccount({ graphUrl: `${INSTAGRAM}/` }));
    expect(graphs.forAccount({ graphUrl: null })).toBe(graphs.default);
    expect(graphs.forAccount({ graphUrl: GRAPH_URL })).toBe(graphs.default);
  });

  it("has no client for a stored host the configuration does not name", () => {
    const { graphs, seen } = hosts();
    expect(graphs.forAccount({ graphUrl: "https://collector.example.com" })).toBeUndefined();
    expect(seen).toEqual([]);
  });
});
