import { handleGraphRequest } from "@/lib/graph/sandbox";
import { getServices } from "@/lib/web/services";
import { getSandbox } from "../sandbox-host";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * The built-in Graph-compatible sandbox; everything happens in lib/graph/sandbox. One catch-all
 * route for every path under /graph, versioned or not: Meta serves some paths without a version
 * (graph.instagram.com/access_token, /refresh_access_token, api.instagram.com/oauth/access_token),
 * and a route table here that listed them one by one left refresh_access_token a 404 page. Its
 * control surface, /graph/_sandbox/..., comes through here too: Next treats an `app/graph/_sandbox`
 * folder as private (not a route), so handleGraphRequest dispatches the `_sandbox` segment itself.
 */
function answer(request: Request): Promise<Response> | Response {
  const { config } = getServices();
  // With the real Graph API configured the sandbox is not an open fetcher.
  if (!config.GRAPH_SANDBOX)
    return new Response("The Graph sandbox is off: GRAPH_URL points elsewhere.", { status: 404 });
  return handleGraphRequest(request, getSandbox());
}

export const GET = answer;
export const HEAD = answer;
export const POST = answer;
// Graph's own answer to a method it does not support (#100), not Dispatch's problem+json: this is Meta's interface.
export const PUT = answer;
export const PATCH = answer;
export const DELETE = answer;
