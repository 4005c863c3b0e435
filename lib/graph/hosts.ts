import type { Config } from "../config";
import { createGraphClient, type GraphClient, type GraphClientOptions } from "./client";
import type { GraphPacer } from "./pacing";
import type { GraphFailureView } from "./failure-view";

/**
 * Graph per host. An account connected with Meta's login keeps the Graph host it was connected
 * through (graph.instagram.com's with Instagram Login, graph.facebook.com's with Facebook Login
 * for Business, against Meta), and every call for it goes there; an account
 * without one (a pasted token, REEL_ACCOUNTS) goes to GRAPH_URL. One client per host, made on
 * first use, all with the same version, timeout, pacer and metrics.
 *
 * A stored host is a string in Redis: a token is sent to it only when it is one of the hosts the
 * configuration names (GRAPH_URL, the logins' Graph hosts), never to whatever the
 * record says.
 */
export interface GraphHosts {
  /** GRAPH_URL's client: for a token that belongs to no stored account yet (a pasted token's check). */
  readonly default: GraphClient;
  /** The account's host's client; undefined when its stored host is not a configured one (connect it again). */
  forAccount(account: { graphUrl: string | null }): GraphClient | undefined;
}

export type GraphHostsOptions = Omit<GraphClientOptions, "graphUrl"> & {
  /** GRAPH_URL: the default host. */
  graphUrl: string;
  /** The other hosts an account may have been connected through (the INSTAGRAM_LOGIN's and FACEBOOK_LOGIN's graphUrl). */
  otherHosts: readonly string[];
};

export function createGraphHosts(options: GraphHostsOptions): GraphHosts {
  const { otherHosts, ...clientOptions } = options;
  const configured = [options.graphUrl, ...otherHosts];
  const clients = new Map<string, GraphClient>();
  const clientOf = (graphUrl: string) => {
    let client = clients.get(graphUrl);
    if (!client) {
      client = createGraphClient({ ...clientOptions, graphUrl });
      clients.set(graphUrl, client);
    }
    return client;
  };
  const defaultClient = clientOf(trustedGraphUrl(options.graphUrl, configured)!);
  return {
    default: defaultClient,
    forAccount(account) {
      if (!account.graphUrl) return defaultClient;
      const host = trustedGraphUrl(account.graphUrl, configured);
      return host === undefined ? undefined : clientOf(host);
    },
  };
}

/**
 * The hosts as the configuration names them, paced by the process's one pacer (made by its
 * composition root, lib/web/services.ts or lib/worker/services.ts, and shared with what else
 * calls Graph there: the Meta logins, the token refresh).
 */
export function configuredGraphHosts(
  config: Pick<Config, "GRAPH_URL" | "GRAPH_VERSION" | "INSTAGRAM_LOGIN" | "FACEBOOK_LOGIN">,
  pacer: GraphPacer,
  timeoutMs?: number,
): GraphHosts {
  return createGraphHosts({
    graphUrl: config.GRAPH_URL,
    otherHosts: [config.INSTAGRAM_LOGIN.graphUrl, config.FACEBOOK_LOGIN.graphUrl],
    version: config.GRAPH_VERSION,
    fetch: (input, init) => fetch(input, init),
    timeoutMs,
    pacer,
  });
}

/**
 * The configured host a stored one names (compared as URLs: scheme, host, port and path, a trailing
 * slash aside), or undefined when it names none. What is returned is the configuration's own
 * string, so nothing of the record is ever used to build a request.
 */
export function trustedGraphUrl(stored: string, configured: readonly string[]): string | undefined {
  const key = hostKey(stored);
  if (key === undefined) return undefined;
  const match = configured.find((url) => hostKey(url) === key);
  return match?.replace(/\/+$/, "");
}

function hostKey(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

/** What an account whose stored Graph host is not a configured one shows, and why its publications wait. */
export function untrustedGraphHostError(): GraphFailureView {
  const remedy = "Connect the account again: it will be stored with a Graph host Dispatch is configured for.";
  return {
    code: null,
    subcode: null,
    message:
      "The account's stored Graph host is neither GRAPH_URL nor the Graph host of Instagram Login or Facebook Login.",
    fbtrace_id: null,
    classification: "reconnect-account",
    headline: "Dispatch will not send this account's token to the Graph host it was stored with.",
    remedy,
    advice: remedy,
  };
}
