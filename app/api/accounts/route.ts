import { json, otherMethods, readJsonBody, withTenant } from "@/lib/web/http";
import { listAccountViews } from "@/lib/accounts/account-view";
import { connectAccount, connectAccountSchema } from "@/lib/accounts/connect-account";
import { namespaceOf } from "@/lib/web/namespace";

export const dynamic = "force-dynamic";

const depsOf = ({ redis, accounts, graphs, config }: import("@/lib/web/services").Services) => ({
  redis,
  accounts,
  graphs,
  sandbox: config.GRAPH_SANDBOX,
});

/** The tenant's publishing accounts: status, username and quota, never their tokens. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  return json({ data: await listAccountViews(depsOf(services), tenantId, request.signal) });
});

/** Connects an account (or reconnects it with a new token) once Graph accepted the token. */
export const POST = withTenant(async (request: Request, { services, tenantId }) => {
  const input = await readJsonBody(request, connectAccountSchema);
  const account = await connectAccount(depsOf(services), tenantId, input, request.signal);
  return json(account, 201, { location: `${namespaceOf(request)}/accounts/${account.account_id}` });
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET, POST });
