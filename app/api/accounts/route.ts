import { json, otherMethods, withTenant } from "@/lib/http";
import { listAccounts } from "@/lib/reels/accounts";

export const dynamic = "force-dynamic";

/** The tenant's publishing accounts: ids and usernames, never their tokens. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const { config } = services;
  const data = await listAccounts(services, config.REEL_ACCOUNTS, tenantId, { sandbox: config.GRAPH_SANDBOX, signal: request.signal });
  return json({ data });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
