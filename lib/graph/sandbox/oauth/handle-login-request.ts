import type { SandboxDeps } from "../deps";
import { readGraphParams } from "../graph-request";
import type { SandboxHost } from "../sandbox-hosts";
import { answerFacebookDialog } from "./facebook-dialog";
import { exchangeFacebookToken } from "./facebook-tokens";
import { answerLoginDialog } from "./login-dialog";
import { exchangeForLongLived, exchangeLoginCode, refreshLongLived } from "./login-tokens";

/**
 * The login paths, which sit on other hosts at Meta and beside the Graph paths here: Instagram
 * Login's unversioned ones (www.instagram.com, api.instagram.com, graph.instagram.com) and
 * Facebook Login's (www.facebook.com/{version}/dialog/oauth, graph.facebook.com/{version}/oauth/
 * access_token, also without the version). Undefined for any other path. Meta takes POST as well as
 * GET at every oauth/access_token (its own sample app posts): a versioned one, or any on the
 * Facebook host, is Facebook's exchange either way; an unversioned POST elsewhere is Instagram's
 * code exchange (api.instagram.com), as before.
 */
export async function handleLoginRequest(
  request: Request,
  deps: SandboxDeps,
  segments: string[],
  host: SandboxHost = "any",
): Promise<Response | undefined> {
  const method = request.method.toUpperCase();
  const versioned = /^v\d{1,2}\.\d{1,2}$/.test(segments[0] ?? "");
  const path = (versioned ? segments.slice(1) : segments).join("/");
  if (path === "dialog/oauth" && versioned) return answerFacebookDialog(request, deps);
  const facebookExchange = method === "GET" || (method === "POST" && (versioned || host === "facebook"));
  if (path === "oauth/access_token" && facebookExchange)
    return exchangeFacebookToken(deps, await readGraphParams(request));
  if (versioned) return undefined;
  if (path === "oauth/authorize") return answerLoginDialog(request, deps);
  if (path === "oauth/access_token" && method === "POST")
    return exchangeLoginCode(deps, await readGraphParams(request));
  if (path === "access_token" && method === "GET") return exchangeForLongLived(deps, await readGraphParams(request));
  if (path === "refresh_access_token" && method === "GET")
    return refreshLongLived(deps, await readGraphParams(request));
  return undefined;
}
