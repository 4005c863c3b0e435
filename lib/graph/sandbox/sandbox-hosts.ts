import { GraphError } from "../error";
import type { TokenLogin } from "./sandbox-tokens";

/**
 * Meta's two Graph hosts under the sandbox's one mount: `/graph/instagram` is graph.instagram.com
 * (Instagram Login's tokens), `/graph/facebook` is graph.facebook.com (Facebook Login's). A token
 * on the other login's host is refused, as Meta refuses it. `/graph` itself stays the sandbox's
 * host for any token: GRAPH_URL points there, and accounts connected before the hosts were modelled
 * are stored with it (lib/accounts keeps each account's Graph host) and must keep publishing.
 * Tokens no login made (the control surface's, REEL_ACCOUNTS') work on every host.
 */
export type SandboxHost = "any" | "instagram" | "facebook";

/** The first path segment that names a host, by host. */
export const SANDBOX_HOST_SEGMENTS = { instagram: "instagram", facebook: "facebook" } as const;

export function hostOfSegment(segment: string | undefined): Exclude<SandboxHost, "any"> | undefined {
  if (segment === SANDBOX_HOST_SEGMENTS.instagram) return "instagram";
  if (segment === SANDBOX_HOST_SEGMENTS.facebook) return "facebook";
  return undefined;
}

/** Whether a token from `login` is accepted on `host`. */
export function tokenFitsHost(login: TokenLogin | undefined, host: SandboxHost | undefined): boolean {
  return login === undefined || host === undefined || host === "any" || host === login;
}

/**
 * A token on the other login's host. An Instagram Login token on graph.facebook.com is answered
 * 190 "Invalid OAuth access token - Cannot parse access token" (reported by users of
 * TiagoGrosso/instagram-graph-api-lib, issue #462: the host decides which tokens parse). Meta
 * documents neither direction; the sandbox answers the reverse the same way.
 */
export function wrongHostToken(): GraphError {
  return new GraphError({ code: 190, message: "Invalid OAuth access token - Cannot parse access token" });
}

/**
 * The error as `host` words it: graph.instagram.com names the foreign-object error's type
 * IGApiException where graph.facebook.com says GraphMethodException (graph-reference.md).
 */
export function errorOnHost(error: GraphError, host: SandboxHost | undefined): GraphError {
  if (host !== "instagram" || error.type !== "GraphMethodException") return error;
  return new GraphError({
    message: error.message,
    code: error.code,
    subcode: error.subcode,
    type: "IGApiException",
    status: error.status,
    isTransient: error.isTransient,
    userTitle: error.userTitle,
    userMessage: error.userMessage,
    fbtraceId: error.fbtraceId,
  });
}
