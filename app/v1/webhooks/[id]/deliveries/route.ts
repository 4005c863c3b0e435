import { json, otherMethods, parseWith, withTenant } from "@/lib/web/http";
import { deliveriesQuerySchema, listDeliveryAttempts } from "@/lib/webhooks/deliveries";
import { parseWebhookId } from "@/lib/webhooks/input";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    const query = parseWith(deliveriesQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return json(await listDeliveryAttempts(services.redis, tenantId, parseWebhookId((await params).id), query.limit));
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
