import { json, otherMethods, withTenant } from "@/lib/web/http";
import { enforceRateLimit } from "@/lib/web/rate-limit";
import { resendDelivery } from "@/lib/webhooks/deliveries";
import { parseDeliveryId, parseWebhookId } from "@/lib/webhooks/input";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  async (
    _request: Request,
    { services, tenantId },
    { params }: { params: Promise<{ id: string; delivery_id: string }> },
  ) => {
    const { id, delivery_id } = await params;
    // Each resend is an outbound POST: it counts like a submission, in a budget of its own.
    await enforceRateLimit(services.redis, tenantId, "resend", services.config.RATE_LIMIT_PER_MINUTE);
    return json(await resendDelivery(services.redis, tenantId, parseWebhookId(id), parseDeliveryId(delivery_id)), 202);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
