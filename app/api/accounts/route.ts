import { authenticate } from "@/lib/auth";
import { json, withProblems } from "@/lib/http";
import { listAccounts } from "@/lib/reels/accounts";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

/** The tenant's publishing accounts: ids only, never their tokens. */
export const GET = withProblems(async (request: Request) => {
  const services = getServices();
  const { config } = services;
  const { tenantId } = await authenticate(request, services);
  return json({ data: listAccounts(config.REEL_ACCOUNTS, tenantId, config.GRAPH_SANDBOX) });
});
