import { ApiError } from "@/lib/errors";
import { json, otherMethods, parseWith, withTenant } from "@/lib/web/http";
import { accountInsightsQuerySchema, listAccountInsights } from "@/lib/reels/insights/read-reel-insights";

export const dynamic = "force-dynamic";

/** The account's published reels with their last insights, sorted by any metric; read from the cache, never from Graph. */
export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ account_id: string }> }) => {
    const query = parseWith(accountInsightsQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    const account = await services.accounts.find(tenantId, (await params).account_id);
    if (!account) throw new ApiError("not-found", "No such account for this tenant.");
    return json({ data: await listAccountInsights(services.redis, tenantId, account.accountId, query) });
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
