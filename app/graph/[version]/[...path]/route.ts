import { handleGraphRequest } from "@/lib/reels/sandbox";
import { getSandboxDeps, sandboxEnabled } from "@/lib/reels/sandbox/web-deps";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The built-in Graph-compatible sandbox; everything happens in lib/reels/sandbox. */
function answer(request: Request): Promise<Response> | Response {
  if (!sandboxEnabled()) return new Response("The Graph sandbox is off: GRAPH_URL points elsewhere.", { status: 404 });
  return handleGraphRequest(request, getSandboxDeps());
}

export const GET = answer;
export const HEAD = answer;
export const POST = answer;
// Graph's own answer to a method it does not support (#100), not Dispatch's problem+json: this is Meta's interface.
export const PUT = answer;
export const PATCH = answer;
export const DELETE = answer;
