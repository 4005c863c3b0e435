import { json, otherMethods, withTenant } from "@/lib/web/http";
import { parseWebhookId } from "@/lib/webhooks/input";
import { deleteWebhook, readWebhookOrThrow, toWebhookView } from "@/lib/webhooks/store";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

export const GET = withTenant(async (_request: Request, { services, tenantId }, { params }: Params) =>
  json(toWebhookView(await readWebhookOrThrow(services.redis, tenantId, parseWebhookId((await params).id)))),
);

export const DELETE = withTenant(async (_request: Request, { services, tenantId }, { params }: Params) => {
  await deleteWebhook(services.redis, tenantId, parseWebhookId((await params).id));
  return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
});

export const { POST, PUT, PATCH, OPTIONS } = otherMethods({ GET, DELETE });
