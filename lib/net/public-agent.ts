import { lookup as systemLookup, type LookupAddress, type LookupOptions } from "node:dns";
import type { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import { Agent, buildConnector } from "undici";
import { isPublicAddress } from "./public-address";

/**
 * An undici dispatcher for fetching user-supplied URLs: it checks the address it actually
 * connects to, not the name in the URL. Names are resolved by its own lookup, which refuses the
 * connection when any answer is not public, and the socket connects to exactly the addresses that
 * lookup approved, so a DNS server that answers differently the second time (rebinding) gains
 * nothing. Address literals, which net.connect does not look up, are checked before connecting.
 */

export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface PublicAgentOptions {
  /** Let every address through (an operator's explicit choice, ALLOW_PRIVATE_URLS). */
  allowPrivate?: boolean;
  /** `host:port` pairs (IPv6 without brackets) that may be reached at any address: this server's own origin. */
  privateOrigins?: Iterable<string>;
  /** Resolves names; the system's resolver (getaddrinfo, as fetch uses) when absent. */
  lookup?: HostLookup;
  connectTimeoutMs?: number;
}

/** The connection was refused because the address is not public. Its message names no address. */
export class AddressNotAllowedError extends Error {
  readonly code = "EADDRNOTPUBLIC";
  constructor() {
    super("the address is not a public internet address");
    this.name = "AddressNotAllowedError";
  }
}

export function createPublicAgent(options: PublicAgentOptions = {}): Agent {
  const timeout = options.connectTimeoutMs ?? 10_000;
  const anyAddress = buildConnector({ timeout });
  if (options.allowPrivate) return new Agent({ connect: anyAddress });
  const resolveAll = options.lookup ?? systemLookupAll;
  const publicOnly = buildConnector({ timeout, lookup: publicOnlyLookup(resolveAll) });
  const ownOrigins = new Set([...(options.privateOrigins ?? [])].map((o) => o.toLowerCase()));

  const connect: buildConnector.connector = (target, callback) => {
    const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
    if (ownOrigins.has(`${host}:${port}`)) return anyAddress(target, callback);
    if (isIP(host) && !isPublicAddress(host)) return callback(new AddressNotAllowedError(), null);
    return publicOnly(target, callback);
  };
  return new Agent({ connect });
}

/** The origins of this server as the sandbox's own samples name them: loopback at its port. */
export function ownOrigins(port: number): string[] {
  return ["127.0.0.1", "localhost", "::1"].map((host) => `${host}:${port}`);
}

/** A HostLookup that asks the given resolver for A and AAAA records (tests point one at a local DNS server). */
export function resolverLookup(resolver: Pick<Resolver, "resolve4" | "resolve6">): HostLookup {
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const answers = [
      ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (answers.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" });
    return answers;
  };
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** net.connect's `lookup`: every answer must be public, else no connection at all. */
export function publicOnlyLookup(resolveAll: HostLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (answers) => {
        const wanted = options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers;
        if (answers.length === 0 || wanted.length === 0) return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), "");
        if (!answers.every((a) => isPublicAddress(a.address))) return callback(new AddressNotAllowedError(), "");
        if (options.all) return callback(null, wanted);
        const [first] = wanted;
        callback(null, first?.address ?? "", first?.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

function systemLookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}
