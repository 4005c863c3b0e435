import { ApiError } from "@/lib/errors";
import { json, otherMethods, withTenant } from "@/lib/web/http";
import { GraphError, GraphPaused } from "@/lib/graph/error";
import { untrustedGraphHostError } from "@/lib/graph/hosts";
import { listPublishedPosts } from "@/lib/reels/list-published-posts";

export const dynamic = "force-dynamic";

/** The account's published reels, read from Graph with its token here, so the browser never holds one. */
export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ account_id: string }> }) => {
    const { config } = services;
    const connected = await services.accounts.find(tenantId, (await params).account_id);
    if (!connected?.accessToken) throw new ApiError("not-found", "No such account for this tenant.");
    const account = { accountId: connected.accountId, accessToken: connected.accessToken };
    const graph = services.graphs.forAccount(connected);
    if (!graph) throw new ApiError("conflict", untrustedGraphHostError().headline);
    try {
      const data = await listPublishedPosts(graph, account, {
        sameServer: config.GRAPH_SANDBOX,
        signal: request.signal,
      });
      return json({ data });
    } catch (error) {
      if (error instanceof GraphPaused) {
        // The account (or the app) is at Graph's usage limit: not asked again before Graph said.
        const seconds = Math.max(1, Math.ceil((error.until - Date.now()) / 1000));
        throw new ApiError(
          "unavailable",
          `The account is rate-limited by Graph until ${new Date(error.until).toISOString()}.`,
          undefined,
          { "Retry-After": String(seconds) },
        );
      }
      const detail =
        error instanceof GraphError ? `Graph refused: ${error.message}` : "The publishing interface did not answer.";
      throw new ApiError("unavailable", detail, undefined, { "Retry-After": "5" });
    }
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
