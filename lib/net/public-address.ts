import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * True only for an address on the public internet: what ipaddr.js names "unicast". Every
 * special-purpose range it names is refused — loopback, private, link-local (cloud metadata),
 * carrier-grade NAT, unique-local, multicast, reserved and documentation ranges, and the IPv6
 * ranges that embed or tunnel to an IPv4 address (IPv4-mapped and -translated, NAT64, 6to4,
 * Teredo), which could lead back to a private one. Anything that is not an address in canonical
 * notation (as DNS answers and URL parsing give them) is refused too.
 */
export function isPublicAddress(address: string): boolean {
  const text = address.replace(/^\[|\]$/g, "");
  if (isIP(text) === 0) return false;
  return ipaddr.parse(text).range() === "unicast";
}
