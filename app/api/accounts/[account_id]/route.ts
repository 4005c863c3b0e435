import { otherMethods, withTenant } from "@/lib/web/http";
import { disconnectAccount } from "@/lib/accounts/connect-account";

export const dynamic = "force-dynamic";

/** Disconnects the account: its token is deleted; publications that still need it wait or fail as for an unknown account. */
export const DELETE = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ account_id: string }> }) => {
    await disconnectAccount(services, tenantId, (await params).account_id);
    return new Response(null, { status: 204 });
  },
);

export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods({ DELETE });
