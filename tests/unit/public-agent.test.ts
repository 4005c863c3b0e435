import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPublicAddress } from "@/lib/net/public-address";
import { AddressNotAllowedError, createPublicAgent, publicOnlyLookup, resolverLookup } from "@/lib/net/public-agent";
import { startTestDns, type TestDns } from "../dns-server";

/**
 * The fetcher's address policy, checked where it matters: at connect time, on the answers a real
 * DNS server (on 127.0.0.1, see tests/dns-server.ts) gives through a real resolver. No test here
 * sends a packet anywhere but this machine: a public answer is only checked, never connected to.
 */

describe("isPublicAddress", () => {
  it.each([
    ["8.8.8.8", true],
    ["2606:4700:4700::1111", true],
    ["127.0.0.1", false],
    ["10.0.0.7", false],
    ["172.16.0.1", false],
    ["192.168.1.1", false],
    ["169.254.169.254", false],
    ["100.64.0.1", false],
    ["0.0.0.0", false],
    ["255.255.255.255", false],
    ["224.0.0.1", false],
    ["192.88.99.1", false], // 6to4 relay anycast
    ["::1", false],
    ["::", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:0:7f00:1", false], // IPv4-translated, ::ffff:0:0:0/96
    ["2002:7f00:1::", false], // 6to4 of 127.0.0.1
    ["64:ff9b::7f00:1", false], // NAT64
    ["64:ff9b:1::a00:7", false], // local-use NAT64, 64:ff9b:1::/48
    ["fec0::1", false], // site-local
    ["2001::7f00:1", false], // Teredo, 2001::/32
    ["fd00:ec2::254", false],
    ["fe80::1", false],
    ["2001:db8::1", false],
    ["localhost", false],
    ["not an address", false],
  ])("%s → %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe("createPublicAgent", () => {
  let dns: TestDns;
  let server: Server;
  let port: number;
  const hits: string[] = [];

  beforeAll(async () => {
    dns = await startTestDns();
    server = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await dns.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const agent = () => createPublicAgent({ lookup: resolverLookup(dns.resolver) });

  async function refusal(url: string, dispatcher = agent()): Promise<unknown> {
    const error = await fetch(url, { dispatcher }).then(
      () => undefined,
      (e: unknown) => e,
    );
    return (error as { cause?: unknown } | undefined)?.cause;
  }

  it.each([
    ["127.0.0.1"],
    ["::ffff:127.0.0.1"],
    ["2002:7f00:1::"],
    ["64:ff9b::7f00:1"],
    ["64:ff9b:1::7f00:1"],
    ["fec0::1"],
    ["2001::7f00:1"],
    ["192.88.99.1"],
    ["10.0.0.7"],
    ["169.254.169.254"],
  ])("refuses at connect time a name whose DNS answer is %s", async (address) => {
    const name = `host-${hits.length}-${address.replace(/[^0-9a-f]/gi, "-")}.test`;
    dns.set(name, [address]);
    const before = hits.length;
    expect(await refusal(`http://${name}:${port}/secret`)).toBeInstanceOf(AddressNotAllowedError);
    expect(dns.questions.some((q) => q.startsWith(name))).toBe(true); // really asked the DNS server
    expect(hits.length).toBe(before);
  });

  it("refuses a name when any one of its answers is not public", async () => {
    dns.set("mixed.test", ["93.184.216.34", "127.0.0.1"]);
    expect(await refusal(`http://mixed.test:${port}/`)).toBeInstanceOf(AddressNotAllowedError);
  });

  it("refuses address literals, which are never looked up", async () => {
    const before = hits.length;
    expect(await refusal(`http://127.0.0.1:${port}/`)).toBeInstanceOf(AddressNotAllowedError);
    expect(await refusal(`http://[::ffff:7f00:1]:${port}/`)).toBeInstanceOf(AddressNotAllowedError);
    expect(await refusal("http://169.254.169.254/latest/meta-data")).toBeInstanceOf(AddressNotAllowedError);
    expect(hits.length).toBe(before);
  });

  it("lets through this server's own origin, this machine at its port, and nothing else private", async () => {
    const own = createPublicAgent({ lookup: resolverLookup(dns.resolver), ownPort: port });
    const response = await fetch(`http://127.0.0.1:${port}/samples/x.mp4`, { dispatcher: own });
    expect(await response.text()).toBe("ok");
    expect(hits.at(-1)).toBe("/samples/x.mp4");
    dns.set("my-machine.test", ["127.0.0.1"]); // the dashboard opened by this machine's name
    expect((await fetch(`http://my-machine.test:${port}/samples/y.mp4`, { dispatcher: own })).status).toBe(200);
    expect(await refusal(`http://127.0.0.1:${port + 1}/`, own)).toBeInstanceOf(AddressNotAllowedError);
    expect(await refusal(`http://my-machine.test:${port + 1}/`, own)).toBeInstanceOf(AddressNotAllowedError);
    dns.set("elsewhere.test", ["10.0.0.7"]);
    expect(await refusal(`http://elsewhere.test:${port}/`, own)).toBeInstanceOf(AddressNotAllowedError);
    expect(await refusal(`http://[::ffff:10.0.0.7]:${port}/`, own)).toBeInstanceOf(AddressNotAllowedError);
  });

  it("lets everything through with allowPrivate", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/open`, {
      dispatcher: createPublicAgent({ allowPrivate: true }),
    });
    expect(response.status).toBe(200);
  });

  it("hands a public answer to the socket as it came from DNS (checked, not connected to)", async () => {
    dns.set("public.test", ["93.184.216.34", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
    const lookup = publicOnlyLookup(resolverLookup(dns.resolver));
    const all = await new Promise<LookupAddress[]>((resolve, reject) =>
      lookup("public.test", { all: true }, (error, addresses) =>
        error ? reject(error) : resolve(addresses as LookupAddress[]),
      ),
    );
    expect(all).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
    const one = await new Promise<string>((resolve, reject) =>
      lookup("public.test", { family: 4 }, (error, address) => (error ? reject(error) : resolve(address as string))),
    );
    expect(one).toBe("93.184.216.34");
  });

  it("says nothing about the network in its error", async () => {
    const cause = await refusal(`http://127.0.0.1:${port}/`);
    expect(String(cause)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|\d+\.\d+\.\d+\.\d+/);
  });
});
