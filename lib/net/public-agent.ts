import { lookup as systemLookup, type LookupAddress, type LookupOptions } from "node:dns";
import type { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
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
  /**
   * This server's port: a connection to it at one of this machine's own addresses (loopback or
   * an interface's, by literal or by a name that resolves only to such addresses) reaches this
   * server itself, whatever host name the client used, so it is allowed.
   */
  ownPort?: number;
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
  const publicOrOwn = buildConnector({ timeout, lookup: publicOnlyLookup(resolveAll, isOwnAddress) });

  const connect: buildConnector.connector = (target, callback) => {
    const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
    const own = options.ownPort !== undefined && port === options.ownPort;
    if (isIP(host))
      return isPublicAddress(host) || (own && isOwnAddress(host))
        ? anyAddress(target, callback)
        : callback(new AddressNotAllowedError(), null);
    if (own && host === "localhost") return anyAddress(target, callback);
    return (own ? publicOrOwn : publicOnly)(target, callback);
  };
  return new Agent({ connect });
}

/** An address of this machine: loopback, or one of its interfaces'. */
function isOwnAddress(address: string): boolean {
  const text = address.toLowerCase().replace(/^::ffff:(?=\d+\.)/, "");
  if (text === "::1" || /^127\./.test(text)) return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address.toLowerCase() === text));
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

/** net.connect's `lookup`: every answer must be public (or pass `allowed`), else no connection at all. */
export function publicOnlyLookup(resolveAll: HostLookup, allowed: (address: string) => boolean = isPublicAddress) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (answers) => {
        const wanted =
          options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers;
        if (answers.length === 0 || wanted.length === 0)
          return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), "");
        if (!answers.every((a) => isPublicAddress(a.address) || allowed(a.address)))
          return callback(new AddressNotAllowedError(), "");
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
    systemLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}
