import { json, otherMethods, withTenant } from "@/lib/http";
import { listAccounts } from "@/lib/reels/accounts";

export const dynamic = "force-dynamic";

/** The tenant's publishing accounts: ids only, never their tokens. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const { config } = services;
  return json({ data: listAccounts(config.REEL_ACCOUNTS, tenantId, config.GRAPH_SANDBOX) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
