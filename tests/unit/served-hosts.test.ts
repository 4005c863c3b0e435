import { describe, expect, it } from "vitest";
import { hostNameOf, servedHostNames, servesHost } from "@/lib/net/served-hosts";

describe("hostNameOf", () => {
  it.each([
    ["Example.COM:3000", "example.com"],
    ["example.com", "example.com"],
    ["localhost.:3000", "localhost"],
    ["[::1]:3000", "::1"],
    ["[::1]", "::1"],
    ["::1", "::1"],
    ["127.0.0.1:3300", "127.0.0.1"],
  ])("%s → %s", (host, name) => expect(hostNameOf(host)).toBe(name));
});

describe("servedHostNames", () => {
  it("serves PUBLIC_URL's host, a bound HOST, ALLOWED_HOSTS and the loopback names, and no wildcard", () => {
    const served = servedHostNames({
      PUBLIC_URL: "https://Dispatch.Example.com",
      HOST: "10.0.0.5",
      ALLOWED_HOSTS: ["web", "Dispatch.Internal"],
    });
    expect([...served].sort()).toEqual(
      ["10.0.0.5", "127.0.0.1", "::1", "dispatch.example.com", "dispatch.internal", "localhost", "web"].sort(),
    );
    expect(servedHostNames({ PUBLIC_URL: "http://127.0.0.1:3000", HOST: "0.0.0.0" }).has("0.0.0.0")).toBe(false);
    expect(servedHostNames({ PUBLIC_URL: "http://[::1]:3000", HOST: "::" }).has("::")).toBe(false);
  });
});

describe("servesHost", () => {
  const served = servedHostNames({ PUBLIC_URL: "http://127.0.0.1:3000" });
  it("refuses a rebound name, serves the address a wildcard-bound connection came to", () => {
    expect(servesHost(served, "rebind.attacker.example:3300", "127.0.0.1")).toBe(false);
    expect(servesHost(served, "10.0.0.5:3000", "10.0.0.5")).toBe(true);
    expect(servesHost(served, "10.0.0.5:3000", "::ffff:10.0.0.5")).toBe(true);
    expect(servesHost(served, "10.0.0.6:3000", "10.0.0.5")).toBe(false);
    expect(servesHost(served, undefined, "127.0.0.1")).toBe(true);
  });
});
