import type { SandboxDeps } from "../deps";
import { readGraphParams } from "../graph-request";
import { answerLoginDialog } from "./login-dialog";
import { exchangeForLongLived, exchangeLoginCode, refreshLongLived } from "./login-tokens";

/**
 * Instagram Login's unversioned paths, which sit on other hosts at Meta (www.instagram.com,
 * api.instagram.com, graph.instagram.com) and beside the versioned Graph paths here. Undefined
 * for any other path.
 */
export async function handleLoginRequest(
  request: Request,
  deps: SandboxDeps,
  segments: string[],
): Promise<Response | undefined> {
  const method = request.method.toUpperCase();
  const path = segments.join("/");
  if (path === "oauth/authorize") return answerLoginDialog(request, deps);
  if (path === "oauth/access_token" && method === "POST")
    return exchangeLoginCode(deps, await readGraphParams(request));
  if (path === "access_token" && method === "GET") return exchangeForLongLived(deps, await readGraphParams(request));
  if (path === "refresh_access_token" && method === "GET")
    return refreshLongLived(deps, await readGraphParams(request));
  return undefined;
}
