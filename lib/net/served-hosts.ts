/**
 * The Host names the web server answers. A page on another site can point its own name at
 * 127.0.0.1 (DNS rebinding) and then read this server as same-origin: the loopback-only surfaces
 * (/metrics, the sandbox's controls) included. Its requests still carry its name in `Host`, so a
 * server that answers only its own names refuses them (421 Misdirected Request, from the request
 * guard). Served: PUBLIC_URL's host, the address the server binds, the loopback names and
 * ALLOWED_HOSTS; and any address literal the connection really arrived on (a server bound to
 * 0.0.0.0 is reached at its machine's addresses, which no rebinding page can send as a name).
 */

export interface ServedHostsConfig {
  PUBLIC_URL: string;
  HOST?: string;
  ALLOWED_HOSTS?: string[];
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];
const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);

/** The names, lower-case, without port or IPv6 brackets: what hostNameOf makes of a Host header. */
export function servedHostNames(config: ServedHostsConfig): ReadonlySet<string> {
  const names = new Set(LOOPBACK_NAMES);
  names.add(hostNameOf(new URL(config.PUBLIC_URL).host));
  if (config.HOST && !WILDCARDS.has(config.HOST)) names.add(hostNameOf(config.HOST));
  for (const name of config.ALLOWED_HOSTS ?? []) names.add(hostNameOf(name));
  return names;
}

/** `Example.COM:3000` → `example.com`, `[::1]:3000` → `::1`, `localhost.` → `localhost`: string work only, it runs on every request. */
export function hostNameOf(host: string): string {
  let name = host;
  if (name.startsWith("[")) {
    const close = name.indexOf("]");
    name = close > 0 ? name.slice(1, close) : name;
  } else {
    const colon = name.lastIndexOf(":");
    // One colon is a port; more is a bare IPv6 address (HOST=::1).
    if (colon >= 0 && name.indexOf(":") === colon) name = name.slice(0, colon);
  }
  if (name.endsWith(".")) name = name.slice(0, -1);
  return name.toLowerCase();
}

/** Whether a request with this Host is for this server; `localAddress` is the socket's own address. */
export function servesHost(served: ReadonlySet<string>, host: string | undefined, localAddress?: string): boolean {
  // No Host at all: HTTP/1.0, from no browser; nothing to have been rebound.
  if (host === undefined) return true;
  const name = hostNameOf(host);
  if (served.has(name)) return true;
  return !!localAddress && (name === localAddress || `::ffff:${name}` === localAddress);
}
