import { isIP } from "node:net";
import { isPublicAddress } from "./public-address";

/**
 * Why a fetcher elsewhere could not reach addresses under `publicUrl` (PUBLIC_URL), or undefined
 * when it could. `fetcher` says who fetches: "this-machine" (the built-in Graph sandbox, served by
 * this same server, which reaches its own origin on loopback too) or "internet" (Meta's servers).
 * For the internet, PUBLIC_URL must be http(s) on a public address or on a name; a name is not
 * resolved here (a name may resolve differently where it matters, and a submit must not wait on
 * DNS): it counts as reachable.
 */
export function unfetchableUrlReason(publicUrl: string, fetcher: "this-machine" | "internet"): string | undefined {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return `PUBLIC_URL (${publicUrl}) is not a URL.`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return `PUBLIC_URL (${url.origin}) is not an http or https address.`;
  if (fetcher === "this-machine") return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && !isPublicAddress(host))
    return `PUBLIC_URL (${url.origin}) is not a public address, so Meta cannot fetch from it.`;
  if (isIP(host) === 0 && (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")))
    return `PUBLIC_URL (${url.origin}) names this machine or a local network, so Meta cannot fetch from it.`;
  return undefined;
}
