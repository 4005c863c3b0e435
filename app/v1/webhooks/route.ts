import { json, otherMethods, readJsonBody, withTenant } from "@/lib/web/http";
import { webhookInputSchema } from "@/lib/webhooks/input";
import { createWebhook, listWebhooks } from "@/lib/webhooks/store";

export const dynamic = "force-dynamic";

export const POST = withTenant(async (request: Request, { services, tenantId }) => {
  const input = await readJsonBody(request, webhookInputSchema({ allowPrivate: services.config.ALLOW_PRIVATE_URLS }));
  const webhook = await createWebhook(services.redis, tenantId, input, services.config.WEBHOOKS_PER_TENANT);
  return json(webhook, 201, { location: `/v1/webhooks/${webhook.id}` });
});

export const GET = withTenant(async (_request: Request, { services, tenantId }) =>
  json(await listWebhooks(services.redis, tenantId)),
);

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET, POST });
